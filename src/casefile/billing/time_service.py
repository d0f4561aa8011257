"""Time entries, timers, expenses and rates: the rules (docs/billing.md#time-and-expenses).

The router hands in the case loaded for the caller (`access.matter.case_for`); every entry's rate
is the one that applied when it was made (matter override, else client, else the user's default)
and is frozen on it, so a later change of rates never changes recorded time."""

from __future__ import annotations

from sqlalchemy import Select, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.access.holds import ensure_no_hold
from casefile.access.matter import Level, case_for, row_in_case, visible_to
from casefile.audit import service as audit
from casefile.auth.permissions import Permission, Principal
from casefile.billing import quick_entry, rules, utbms
from casefile.billing.repository import EXPENSE_LIST, TIME_LIST, applicable_rate, rate_row, timers_on_cases
from casefile.billing.schemas import ExpenseCreate, RateSet, TimeEntryCreate, TimeEntryUpdate
from casefile.clock import utcnow
from casefile.db import get_or_404, referenced
from casefile.errors import Conflict, ErrorDetail, NotFound, ValidationFailed, permission_missing
from casefile.events import billing_payloads as payloads
from casefile.events.outbox import emit
from casefile.listing import ListQuery, Page, fetch_page
from casefile.models import BillingRate, Case, Contact, Document, Expense, TimeEntry, Timer, User
from casefile.money import Money, MoneyError, check_currency
from casefile.settings import Settings

BILLED = "A billed entry cannot change: void its invoice first"


def parse_money(field: str, amount: str, currency: str) -> Money:
    try:
        return Money.of(amount, check_currency(currency))
    except MoneyError as exc:
        raise ValidationFailed.on(field, str(exc)) from exc


def _check_codes(task_code: str | None, activity_code: str | None) -> None:
    if task_code is not None and not utbms.is_code("task", task_code):
        raise ValidationFailed.on("task_code", "Not a UTBMS task code (GET /billing/utbms-codes)")
    if activity_code is not None and not utbms.is_code("activity", activity_code):
        raise ValidationFailed.on("activity_code", "Not a UTBMS activity code (GET /billing/utbms-codes)")


async def _price(session: AsyncSession, settings: Settings, entry: TimeEntry, case: Case) -> None:
    """Bill the entry's seconds at the increment and the frozen rate (taken now if it has none)."""
    increment = settings.billing_increment_minutes * 60
    if not entry.rate_source:
        rate, source = await applicable_rate(session, entry.user_id, case)
        entry.rate_minor = rate.rate_minor if rate else 0
        entry.currency = rate.currency if rate else settings.billing_currency
        entry.rate_source = source
    entry.increment_seconds = increment
    entry.billed_seconds = rules.billed_seconds(entry.seconds, increment)
    rate_money = Money.from_minor(entry.rate_minor, entry.currency)
    entry.amount_minor = rules.fee(rate_money, entry.billed_seconds).minor if entry.billable else 0


async def create_entry(
    session: AsyncSession, settings: Settings, actor: Principal, case: Case, body: TimeEntryCreate
) -> TimeEntry:
    """A time entry on `case` (loaded with `write` for the caller)."""
    seconds, description = body.seconds, body.description
    if body.text is not None:
        try:
            parsed = quick_entry.parse(body.text)
        except quick_entry.NotUnderstood as exc:
            raise ValidationFailed.on("text", str(exc)) from exc
        seconds, description = parsed.seconds, parsed.description
    if seconds is None:
        raise ValidationFailed.on("seconds", "Give seconds, or text such as '1h20 drafted answer'")
    if not description:
        raise ValidationFailed.on("description", "Say what was done")
    _check_codes(body.task_code, body.activity_code)
    user_id = body.user_id or actor.user_id
    if user_id is None:
        raise ValidationFailed.on("user_id", "Whose time is it?")
    if user_id != actor.user_id:
        # Recording someone else's time is a billing manager's right.
        if not actor.can(Permission.APPROVE_BILLING):
            raise permission_missing(Permission.APPROVE_BILLING)
        await referenced(session, User, user_id, "user_id", "User not found")
    now = utcnow()
    entry = TimeEntry(
        case_id=case.id,
        user_id=user_id,
        work_date=body.date or now.date(),
        seconds=seconds,
        description=description,
        billable=body.billable,
        task_code=body.task_code,
        activity_code=body.activity_code,
        state=body.state,
        rate_source="",
        created_by=actor.actor_id,
        created_at=now,
        updated_at=now,
    )
    await _price(session, settings, entry, case)
    session.add(entry)
    await session.flush()
    await emit(session, "time_entry.created", payloads.time_entry(entry, actor.actor_id))
    return entry


async def entry_for(session: AsyncSession, principal: Principal, entry_id: str, level: Level) -> TimeEntry:
    return await row_in_case(session, principal, TimeEntry, entry_id, level, not_found="Time entry not found")


async def update_entry(
    session: AsyncSession, settings: Settings, actor: Principal, entry: TimeEntry, body: TimeEntryUpdate
) -> TimeEntry:
    # A held matter's time is evidence of what was done when (docs/billing.md#legal-holds).
    await ensure_no_hold(session, entry.case_id, "changing a time entry")
    if entry.state == "billed" or entry.invoice_id is not None:
        raise Conflict(BILLED)
    values = body.model_dump(exclude_unset=True)
    for name, value in values.items():
        if value is None and name not in ("task_code", "activity_code"):
            raise ValidationFailed.on(name, f"{name} cannot be null")
    _check_codes(values.get("task_code", entry.task_code), values.get("activity_code", entry.activity_code))
    if "date" in values:
        entry.work_date = values.pop("date")
    for name, value in values.items():
        setattr(entry, name, value)
    case = await get_or_404(session, Case, entry.case_id, "Case not found")
    await _price(session, settings, entry, case)  # the rate stays the one frozen on the entry
    entry.updated_at = utcnow()
    await session.flush()
    await emit(session, "time_entry.updated", payloads.time_entry(entry, actor.actor_id))
    return entry


async def delete_entry(session: AsyncSession, actor: Principal, entry: TimeEntry) -> None:
    await ensure_no_hold(session, entry.case_id, "deleting a time entry")
    if entry.state == "billed" or entry.invoice_id is not None:
        raise Conflict(BILLED)
    await emit(session, "time_entry.deleted", payloads.time_entry(entry, actor.actor_id))
    await session.delete(entry)
    await session.flush()


async def list_entries(
    session: AsyncSession, query: ListQuery, *, case: Case | None, visible: Select[tuple[str]] | None
) -> Page[TimeEntry]:
    condition = (
        TimeEntry.case_id == case.id
        if case
        else TimeEntry.case_id.in_(visible if visible is not None else [])
    )
    page = await fetch_page(session, TIME_LIST, query, conditions=[condition])
    await audit.record_read(
        session,
        "time_entry.list",
        resource_type="case" if case else None,
        resource_id=case.id if case else None,
        case_id=case.id if case else None,
    )
    return page


# Timers: one running per user; starting one pauses the one running.


def elapsed(timer: Timer) -> int:
    running = int((utcnow() - timer.running_since).total_seconds()) if timer.running_since else 0
    return timer.accumulated_seconds + max(running, 0)


async def _user_timers(session: AsyncSession, user_id: str) -> list[Timer]:
    statement = select(Timer).where(Timer.user_id == user_id).order_by(Timer.created_at).with_for_update()
    return list((await session.scalars(statement)).all())


def _pause(timer: Timer) -> None:
    timer.accumulated_seconds = elapsed(timer)
    timer.running_since = None


async def start_timer(session: AsyncSession, actor: Principal, case: Case, description: str) -> Timer:
    assert actor.user_id is not None
    for other in await _user_timers(session, actor.user_id):
        if other.running_since is not None:
            _pause(other)
    timer = Timer(user_id=actor.user_id, case_id=case.id, description=description, running_since=utcnow())
    session.add(timer)
    await session.flush()
    return timer


async def timer_for(session: AsyncSession, principal: Principal, timer_id: str) -> Timer:
    timer = await session.get(Timer, timer_id, with_for_update=True)
    if timer is None or timer.user_id != principal.user_id:
        raise NotFound("Timer not found")
    return timer


async def list_timers(session: AsyncSession, principal: Principal) -> list[Timer]:
    return await _user_timers(session, principal.user_id or "")


async def visible_timers(session: AsyncSession, principal: Principal) -> list[tuple[Timer, Case]]:
    """The caller's timers with their matters, only on matters they may see now (one started
    before a wall went up is not shown: the web app's header lists these)."""
    if principal.user_id is None:
        return []
    visible = select(Case.id).where(visible_to(principal))
    return await timers_on_cases(session, principal.user_id, visible)


async def pause_timer(timer: Timer) -> Timer:
    if timer.running_since is None:
        raise Conflict("The timer is not running")
    _pause(timer)
    return timer


async def resume_timer(session: AsyncSession, timer: Timer) -> Timer:
    if timer.running_since is not None:
        raise Conflict("The timer is running")
    for other in await _user_timers(session, timer.user_id):
        if other.running_since is not None:
            _pause(other)
    timer.running_since = utcnow()
    return timer


async def stop_timer(session: AsyncSession, settings: Settings, actor: Principal, timer: Timer) -> TimeEntry:
    """The timer becomes a draft time entry (at least one second) on its case."""
    case = await case_for(session, actor, timer.case_id, Level.WRITE)
    seconds = max(elapsed(timer), 1)
    body = TimeEntryCreate(seconds=seconds, description=timer.description or "Timed work")
    entry = await create_entry(session, settings, actor, case, body)
    await session.delete(timer)
    await session.flush()
    return entry


# Expenses


async def create_expense(
    session: AsyncSession, settings: Settings, actor: Principal, case: Case, body: ExpenseCreate
) -> Expense:
    amount = parse_money("amount", body.amount, body.currency or settings.billing_currency)
    if amount.amount <= 0:
        raise ValidationFailed.on("amount", "An expense is more than zero")
    if body.expense_code is not None and not utbms.is_code("expense", body.expense_code):
        raise ValidationFailed.on("expense_code", "Not a UTBMS expense code")
    if body.receipt_document_id is not None:
        document = await session.get(Document, body.receipt_document_id)
        if document is None or document.case_id != case.id or document.deleted_at is not None:
            raise NotFound.referenced([ErrorDetail("receipt_document_id", "Not a document of this case")])
    expense = Expense(
        case_id=case.id,
        user_id=actor.user_id,
        spent_on=body.date or utcnow().date(),
        amount_minor=amount.minor,
        currency=amount.currency,
        category=body.category,
        description=body.description,
        expense_code=body.expense_code,
        receipt_document_id=body.receipt_document_id,
        billable=body.billable,
    )
    session.add(expense)
    await session.flush()
    await emit(session, "expense.created", payloads.expense_created(expense, actor.actor_id))
    return expense


async def list_expenses(session: AsyncSession, case: Case, query: ListQuery) -> Page[Expense]:
    return await fetch_page(session, EXPENSE_LIST, query, conditions=[Expense.case_id == case.id])


# Rates


async def set_rate(session: AsyncSession, settings: Settings, actor: Principal, body: RateSet) -> BillingRate:
    """Set a user's default rate, or their rate for a client or a matter (at most one of the two)."""
    if body.contact_id and body.case_id:
        raise ValidationFailed.on("case_id", "A rate is for a client or for a matter, not both")
    amount = parse_money("amount", body.amount, body.currency or settings.billing_currency)
    if amount.amount < 0:
        raise ValidationFailed.on("amount", "A rate is not negative")
    await referenced(session, User, body.user_id, "user_id", "User not found")
    if body.contact_id:
        await referenced(session, Contact, body.contact_id, "contact_id", "Contact not found")
    if body.case_id:
        await case_for(session, actor, body.case_id, Level.WRITE)
    row = await rate_row(session, body.user_id, body.contact_id, body.case_id)
    if row is None:
        row = BillingRate(user_id=body.user_id, contact_id=body.contact_id, case_id=body.case_id)
        session.add(row)
    row.rate_minor, row.currency = amount.minor, amount.currency
    row.updated_by, row.updated_at = actor.actor_id, utcnow()
    await session.flush()
    audit.record(
        session,
        "billing.rate_set",
        resource_type="user",
        resource_id=body.user_id,
        case_id=body.case_id,
        details={"amount": str(amount.amount), "currency": amount.currency},
    )
    return row


async def list_rates(
    session: AsyncSession, user_id: str | None, visible: Select[tuple[str]]
) -> list[BillingRate]:
    """The rates; a matter's rate only where the caller may see the matter (walls included)."""
    statement = (
        select(BillingRate)
        .where(or_(BillingRate.case_id.is_(None), BillingRate.case_id.in_(visible)))
        .order_by(BillingRate.user_id, BillingRate.id)
    )
    if user_id:
        statement = statement.where(BillingRate.user_id == user_id)
    return list((await session.scalars(statement)).all())
