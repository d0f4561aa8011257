"""The billing queries: list specs, the rate that applies, what is unbilled, what is owed."""

from __future__ import annotations

from datetime import date
from typing import Any

from sqlalchemy import ColumnElement, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.billing.invoice_schemas import InvoiceOut
from casefile.billing.schemas import ExpenseOut, TimeEntryOut
from casefile.listing import ListSpec, projectable
from casefile.models import (
    ENTRY_STATES,
    INVOICE_STATES,
    BillingRate,
    Case,
    Expense,
    Invoice,
    TimeEntry,
    Timer,
    TrustEntry,
)
from casefile.trust.repository import client_of


def _flag(column: Any) -> Any:
    def condition(session: AsyncSession, values: list[str]) -> ColumnElement[bool]:
        return column.in_([v == "true" for v in values])  # type: ignore[no-any-return]

    return condition


async def _search_entries(session: AsyncSession, words: list[str]) -> ColumnElement[bool]:
    return or_(*(func.lower(TimeEntry.description).like(f"%{w}%") for w in words))


TIME_LIST = ListSpec(
    model=TimeEntry,
    sortable={"date": TimeEntry.work_date, "created_at": TimeEntry.created_at, "seconds": TimeEntry.seconds},
    default_sort="date",
    tiebreak=TimeEntry.id,
    output_fields=projectable(TimeEntryOut),
    filters={
        "state": TimeEntry.state,
        "user_id": TimeEntry.user_id,
        "case_id": TimeEntry.case_id,
        "invoice_id": TimeEntry.invoice_id,
        "billable": _flag(TimeEntry.billable),
    },
    filter_choices={"state": ENTRY_STATES, "billable": ("true", "false")},
    search=_search_entries,
)

EXPENSE_LIST = ListSpec(
    model=Expense,
    sortable={"date": Expense.spent_on, "created_at": Expense.created_at, "amount": Expense.amount_minor},
    default_sort="date",
    tiebreak=Expense.id,
    output_fields=projectable(ExpenseOut),
    filters={"state": Expense.state, "category": Expense.category, "billable": _flag(Expense.billable)},
    filter_choices={"state": ENTRY_STATES, "billable": ("true", "false")},
)

INVOICE_LIST = ListSpec(
    model=Invoice,
    sortable={"created_at": Invoice.created_at, "issued_on": Invoice.issued_on, "total": Invoice.total_minor},
    default_sort="created_at",
    tiebreak=Invoice.id,
    output_fields=projectable(InvoiceOut),
    filters={"state": Invoice.state, "case_id": Invoice.case_id, "number": Invoice.number},
    filter_choices={"state": INVOICE_STATES},
)


async def applicable_rate(session: AsyncSession, user_id: str, case: Case) -> tuple[BillingRate | None, str]:
    """The user's rate on the case: the matter's override, else the client's, else their default."""
    client = await client_of(session, case)
    rows = (await session.scalars(select(BillingRate).where(BillingRate.user_id == user_id))).all()
    for row in rows:
        if row.case_id == case.id:
            return row, "matter"
    for row in rows:
        if client is not None and row.contact_id == client and row.case_id is None:
            return row, "client"
    for row in rows:
        if row.contact_id is None and row.case_id is None:
            return row, "user"
    return None, "none"


async def rate_row(
    session: AsyncSession, user_id: str, contact_id: str | None, case_id: str | None
) -> BillingRate | None:
    statement = select(BillingRate).where(
        BillingRate.user_id == user_id,
        BillingRate.contact_id.is_(None) if contact_id is None else BillingRate.contact_id == contact_id,
        BillingRate.case_id.is_(None) if case_id is None else BillingRate.case_id == case_id,
    )
    return await session.scalar(statement)


async def unbilled_entries(session: AsyncSession, case: Case, start: date, end: date) -> list[TimeEntry]:
    statement = (
        select(TimeEntry)
        .where(
            TimeEntry.case_id == case.id,
            TimeEntry.billable.is_(True),
            TimeEntry.invoice_id.is_(None),
            TimeEntry.state != "billed",
            TimeEntry.work_date.between(start, end),
        )
        .order_by(TimeEntry.work_date, TimeEntry.id)
        .with_for_update()
    )
    return list((await session.scalars(statement)).all())


async def unbilled_expenses(session: AsyncSession, case: Case, start: date, end: date) -> list[Expense]:
    statement = (
        select(Expense)
        .where(
            Expense.case_id == case.id,
            Expense.billable.is_(True),
            Expense.invoice_id.is_(None),
            Expense.state != "billed",
            Expense.spent_on.between(start, end),
        )
        .order_by(Expense.spent_on, Expense.id)
        .with_for_update()
    )
    return list((await session.scalars(statement)).all())


async def open_invoices(session: AsyncSession, as_of: date, case_ids: Any) -> list[Invoice]:
    """Invoices with money owed on `as_of`: approved or sent, issued by then."""
    statement = select(Invoice).where(
        Invoice.state.in_(("approved", "sent")),
        Invoice.issued_on <= as_of,
        Invoice.case_id.in_(case_ids),
    )
    return list((await session.scalars(statement)).all())


async def financial_records(session: AsyncSession, case_id: str) -> str | None:
    """Why a matter's rows must outlive it, if they must: a numbered invoice (the firm's
    numbering has no gaps) or trust entries (a bar auditor's record). None when neither."""
    if await session.scalar(
        select(Invoice.id).where(Invoice.case_id == case_id, Invoice.number.is_not(None)).limit(1)
    ):
        return "it has numbered invoices"
    if await session.scalar(select(TrustEntry.id).where(TrustEntry.case_id == case_id).limit(1)):
        return "it has trust money records"
    return None


async def timers_on_cases(session: AsyncSession, user_id: str, case_ids: Any) -> list[tuple[Timer, Case]]:
    """The user's timers on `case_ids` (a query of the cases they may see), with their cases,
    oldest first; read without a lock (for display)."""
    statement = (
        select(Timer, Case)
        .join(Case, Case.id == Timer.case_id)
        .where(Timer.user_id == user_id, Timer.case_id.in_(case_ids))
        .order_by(Timer.created_at, Timer.id)
    )
    return [(timer, case) for timer, case in (await session.execute(statement)).all()]
