"""Invoices: drafted from a matter's unbilled time and expenses, approved (numbered without gaps,
their entries frozen), sent, paid (in part or whole) or voided (docs/billing.md#invoices).

States: draft → approved → sent → paid, and void from draft, approved or sent while nothing is
paid; any other move is 409. Totals are recomputed by `rules.invoice_totals` on every change of a
draft, and frozen with it at approval."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.access.holds import ensure_no_hold
from casefile.access.matter import Level, row_in_case
from casefile.auth.permissions import Principal
from casefile.billing import rules
from casefile.billing.invoice_schemas import InvoiceCreate, InvoiceUpdate, PaymentCreate
from casefile.billing.repository import unbilled_entries, unbilled_expenses
from casefile.billing.time_service import parse_money
from casefile.clock import utcnow
from casefile.db import dialect_insert
from casefile.errors import Conflict, ErrorDetail, InvalidStatusTransition, NotFound, ValidationFailed
from casefile.events import billing_payloads as payloads
from casefile.events.outbox import emit
from casefile.models import Case, Expense, Invoice, InvoiceCounter, InvoiceLine, InvoicePayment, TimeEntry
from casefile.money import Money
from casefile.settings import Settings

COUNTER_ID = 1
MOVES = {
    "approve": ({"draft"}, "approved"),
    "send": ({"approved"}, "sent"),
    "void": ({"draft", "approved", "sent"}, "void"),
}


async def invoice_for(session: AsyncSession, principal: Principal, invoice_id: str, level: Level) -> Invoice:
    return await row_in_case(session, principal, Invoice, invoice_id, level, not_found="Invoice not found")


async def lines_of(session: AsyncSession, invoice: Invoice) -> list[InvoiceLine]:
    statement = select(InvoiceLine).where(InvoiceLine.invoice_id == invoice.id).order_by(InvoiceLine.position)
    return list((await session.scalars(statement)).all())


async def _recompute(session: AsyncSession, invoice: Invoice) -> list[InvoiceLine]:
    lines = await lines_of(session, invoice)
    c = invoice.currency
    totals = rules.invoice_totals(
        [Money.from_minor(line.amount_minor, c) for line in lines],
        [Money.from_minor(line.write_off_minor, c) for line in lines],
        Decimal(invoice.discount_percent),
        Decimal(invoice.tax_percent),
        c,
    )
    for line, line_totals in zip(lines, totals.lines, strict=True):
        line.discount_minor = line_totals.discount.minor
    invoice.subtotal_minor = totals.subtotal.minor
    invoice.discount_minor = totals.discount.minor
    invoice.write_off_minor = totals.write_off.minor
    invoice.tax_minor = totals.tax.minor
    invoice.total_minor = totals.total.minor
    invoice.updated_at = utcnow()
    await session.flush()
    return lines


def _percent(field: str, value: str) -> str:
    if Decimal(value) > 100:
        raise ValidationFailed.on(field, "At most 100")
    return str(Decimal(value).normalize())


async def draft(
    session: AsyncSession, settings: Settings, actor: Principal, case: Case, body: InvoiceCreate
) -> tuple[Invoice, list[InvoiceLine]]:
    """A draft from the case's unbilled billable entries and expenses in [start, end]; they are
    reserved for it (`invoice_id`) so that no second draft bills them too."""
    if body.end < body.start:
        raise ValidationFailed.on("end", "The period ends before it starts")
    entries = await unbilled_entries(session, case, body.start, body.end)
    expenses = await unbilled_expenses(session, case, body.start, body.end)
    currencies = {e.currency for e in entries} | {x.currency for x in expenses}
    # What the matter holds, not the request, is at fault: 409 (a later entry makes the same
    # request succeed), as the contract's CONFLICT is "a state conflict".
    if not currencies:
        raise Conflict(
            "Nothing unbilled in this period",
            details=[ErrorDetail("start", "Nothing unbilled in this period")],
        )
    if len(currencies) > 1:
        several = f"Unbilled items in several currencies: {sorted(currencies)}"
        raise Conflict(several, details=[ErrorDetail("start", several)])
    invoice = Invoice(
        case_id=case.id,
        currency=currencies.pop(),
        period_start=body.start,
        period_end=body.end,
        discount_percent=_percent("discount_percent", body.discount_percent),
        tax_percent=_percent("tax_percent", body.tax_percent or settings.billing_tax_percent),
        created_by=actor.actor_id,
    )
    session.add(invoice)
    await session.flush()
    position = 0
    for entry in entries:
        position += 1
        entry.invoice_id = invoice.id
        session.add(
            InvoiceLine(
                invoice_id=invoice.id,
                position=position,
                kind="fee",
                source_id=entry.id,
                work_date=entry.work_date,
                description=entry.description,
                user_id=entry.user_id,
                units=str(rules.hours(entry.billed_seconds).normalize()),
                unit_cost_minor=entry.rate_minor,
                amount_minor=entry.amount_minor,
                task_code=entry.task_code,
                activity_code=entry.activity_code,
            )
        )
    for expense in expenses:
        position += 1
        expense.invoice_id = invoice.id
        session.add(
            InvoiceLine(
                invoice_id=invoice.id,
                position=position,
                kind="expense",
                source_id=expense.id,
                work_date=expense.spent_on,
                description=expense.description or expense.category,
                user_id=expense.user_id,
                units="1",
                unit_cost_minor=expense.amount_minor,
                amount_minor=expense.amount_minor,
                expense_code=expense.expense_code,
            )
        )
    await session.flush()
    lines = await _recompute(session, invoice)
    await emit(session, "invoice.created", payloads.invoice(invoice, actor.actor_id))
    return invoice, lines


def _require_draft(invoice: Invoice) -> None:
    if invoice.state != "draft":
        raise Conflict(f"Only a draft invoice changes; this one is {invoice.state}")


async def update_draft(session: AsyncSession, invoice: Invoice, body: InvoiceUpdate) -> list[InvoiceLine]:
    await ensure_no_hold(session, invoice.case_id, "changing an invoice")
    _require_draft(invoice)
    if body.discount_percent is not None:
        invoice.discount_percent = _percent("discount_percent", body.discount_percent)
    if body.tax_percent is not None:
        invoice.tax_percent = _percent("tax_percent", body.tax_percent)
    return await _recompute(session, invoice)


async def write_off(session: AsyncSession, invoice: Invoice, line_id: str, amount: str) -> list[InvoiceLine]:
    await ensure_no_hold(session, invoice.case_id, "writing off an invoice line")
    _require_draft(invoice)
    line = await session.get(InvoiceLine, line_id)
    if line is None or line.invoice_id != invoice.id:
        raise NotFound("Invoice line not found")
    value = parse_money("write_off", amount, invoice.currency)
    if not 0 <= value.minor <= line.amount_minor:
        raise ValidationFailed.on("write_off", "Between zero and the line's amount")
    line.write_off_minor = value.minor
    return await _recompute(session, invoice)


async def _next_number(session: AsyncSession, settings: Settings) -> str:
    """The firm's next number: the counter row is locked until the approval commits (SQLite's
    writers are serialised), so two approvals never take the same number and a rolled-back one
    gives its number back."""
    # The first approvals of a firm race to create the row: insert it if missing (a no-op for all
    # but one of them), then lock it.
    await session.execute(
        dialect_insert(session)(InvoiceCounter).values(id=COUNTER_ID, last_value=0).on_conflict_do_nothing()
    )
    counter = await session.get(InvoiceCounter, COUNTER_ID, with_for_update=True, populate_existing=True)
    assert counter is not None  # inserted above
    counter.last_value += 1
    await session.flush()
    return f"{settings.billing_invoice_prefix}{counter.last_value:06d}"


async def move(
    session: AsyncSession, settings: Settings, actor: Principal, invoice: Invoice, action: str
) -> Invoice:
    if action == "void":
        # Voiding undoes a bill (its entries become billable again); approving and sending only
        # settle it further, so a hold allows them (docs/billing.md#legal-holds).
        await ensure_no_hold(session, invoice.case_id, "voiding an invoice")
    sources, target = MOVES[action]
    if invoice.state not in sources:
        raise InvalidStatusTransition(f"Cannot {action} an invoice that is {invoice.state}")
    if action == "void" and invoice.paid_minor:
        raise InvalidStatusTransition("Cannot void an invoice with payments")
    today = utcnow().date()
    if action == "approve":
        invoice.number = await _next_number(session, settings)
        invoice.approved_by = actor.actor_id
        invoice.issued_on = today
        invoice.due_on = today + timedelta(days=settings.billing_payment_days)
        for model in (TimeEntry, Expense):
            await session.execute(
                update(model)
                .where(model.invoice_id == invoice.id)
                .values(state="billed", updated_at=utcnow())
            )
    if action == "void":
        # The entries are billable again (on a new invoice); a voided number stays used.
        for model in (TimeEntry, Expense):
            await session.execute(
                update(model).where(model.invoice_id == invoice.id).values(state="ready", invoice_id=None)
            )
    invoice.state = target
    invoice.updated_at = utcnow()
    await session.flush()
    event = {"approve": "invoice.approved", "send": "invoice.sent", "void": "invoice.voided"}[action]
    await emit(session, event, payloads.invoice(invoice, actor.actor_id))
    return invoice


async def record_payment(
    session: AsyncSession,
    actor: Principal,
    invoice: Invoice,
    body: PaymentCreate,
    *,
    trust_entry_id: str | None = None,
) -> InvoicePayment:
    """A payment of part or all of the balance; the invoice is `paid` when nothing is left."""
    if invoice.state not in ("approved", "sent"):
        raise InvalidStatusTransition(f"Cannot pay an invoice that is {invoice.state}")
    amount = parse_money("amount", body.amount, invoice.currency)
    balance = invoice.total_minor - invoice.paid_minor
    if amount.minor > balance:  # more than zero: the schema's PositiveAmount
        # The invoice's state (what is paid so far), not the request, refuses it: 409.
        detail = f"At most the balance, {Money.from_minor(balance, invoice.currency)}"
        raise Conflict(detail, details=[ErrorDetail("amount", detail)])
    payment = InvoicePayment(
        invoice_id=invoice.id,
        amount_minor=amount.minor,
        currency=amount.currency,
        paid_on=body.date or utcnow().date(),
        method="trust" if trust_entry_id else body.method,
        reference=body.reference,
        trust_entry_id=trust_entry_id,
        recorded_by=actor.actor_id,
    )
    session.add(payment)
    invoice.paid_minor += amount.minor
    invoice.updated_at = utcnow()
    await session.flush()
    await emit(
        session, "invoice.payment_recorded", payloads.payment_recorded(invoice, payment, actor.actor_id)
    )
    if invoice.paid_minor == invoice.total_minor:
        invoice.state = "paid"
        await session.flush()
        await emit(session, "invoice.paid", payloads.invoice(invoice, actor.actor_id))
    return payment


async def payments_of(session: AsyncSession, invoice: Invoice) -> list[InvoicePayment]:
    statement = (
        select(InvoicePayment)
        .where(InvoicePayment.invoice_id == invoice.id)
        .order_by(InvoicePayment.recorded_at)
    )
    return list((await session.scalars(statement)).all())


def aging(invoices: list[Invoice], as_of: date, currency: str) -> dict[str, object]:
    """Balances owed on `as_of`, by days since the invoice date: 0-30, 31-60, 61-90, 90+."""
    buckets = {name: Money.zero(currency) for name in ("0-30", "31-60", "61-90", "90+")}
    rows = []
    for invoice in sorted(invoices, key=lambda i: (i.issued_on or as_of, i.id)):
        if invoice.currency != currency or invoice.issued_on is None:
            continue
        days = (as_of - invoice.issued_on).days
        bucket = rules.aging_bucket(days)
        balance = Money.from_minor(invoice.total_minor - invoice.paid_minor, currency)
        buckets[bucket] = buckets[bucket] + balance
        rows.append(
            {
                "case_id": invoice.case_id,
                "invoice_id": invoice.id,
                "number": invoice.number,
                "issued_on": invoice.issued_on,
                "days": days,
                "bucket": bucket,
                "balance": str(balance.amount),
                "currency": currency,
            }
        )
    grand = sum((m.amount for m in buckets.values()), Decimal(0))
    return {
        "as_of": as_of,
        "currency": currency,
        "buckets": {k: str(v.amount) for k, v in buckets.items()},
        "total": str(Money.rounded(grand, currency).amount),
        "invoices": rows,
    }
