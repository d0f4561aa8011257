"""The trust ledger's rules (docs/billing.md#trust-money).

Client money moves only by new entries: a deposit, a payment out (`withdrawal`), a transfer to
the operating account for an approved invoice, or a reversal of an earlier deposit or payment
out. Nothing is edited or deleted. The rule that matters most: a matter's balance never goes
below zero. Every movement locks the matter's balance row (`repository.locked_balance`: FOR
UPDATE on PostgreSQL; SQLite's write transactions are serialised) and checks the balance it
read under that lock, so of concurrent withdrawals exactly those the balance covers succeed; the
row's CHECK (balance >= 0) is the last line of defence should a path forget."""

from __future__ import annotations

import calendar
from datetime import date
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.access.matter import Level, row_in_case, visible_to
from casefile.audit import service as audit
from casefile.auth.permissions import Principal
from casefile.clock import utcnow
from casefile.errors import Conflict, ValidationFailed
from casefile.events import billing_payloads as payloads
from casefile.events.outbox import emit
from casefile.listing import ListQuery, Page, fetch_page
from casefile.models import Case, Invoice, TrustEntry
from casefile.money import Money, MoneyError, check_currency
from casefile.settings import Settings
from casefile.trust import repository
from casefile.trust.repository import TRUST_LIST
from casefile.trust.schemas import TrustMovement, TrustReversal

INSUFFICIENT = "Insufficient trust funds on this matter"
_EVENTS = {"deposit": "trust.deposit", "withdrawal": "trust.withdrawal", "transfer": "trust.transfer"}


def _positive(amount: str, currency: str) -> Money:
    try:
        value = Money.of(amount, check_currency(currency))
    except MoneyError as exc:
        raise ValidationFailed.on("amount", str(exc)) from exc
    if value.amount <= 0:
        raise ValidationFailed.on("amount", "More than zero")
    return value


async def _record(
    session: AsyncSession,
    actor: Principal,
    case: Case,
    kind: str,
    signed: Money,
    *,
    reference: str,
    description: str = "",
    invoice_id: str | None = None,
    reverses_id: str | None = None,
) -> TrustEntry:
    balance = await repository.locked_balance(session, case.id, signed.currency)
    after = balance.balance_minor + signed.minor
    if after < 0:
        raise Conflict(INSUFFICIENT)
    balance.balance_minor, balance.updated_at = after, utcnow()
    entry = TrustEntry(
        case_id=case.id,
        contact_id=await repository.client_of(session, case),
        kind=kind,
        amount_minor=signed.minor,
        currency=signed.currency,
        entry_date=utcnow().date(),
        reference=reference,
        description=description,
        invoice_id=invoice_id,
        reverses_id=reverses_id,
        balance_after_minor=after,
        recorded_by=actor.actor_id,
        recorded_at=utcnow(),
    )
    session.add(entry)
    await session.flush()
    await emit(session, _EVENTS.get(kind, "trust.reversal"), payloads.trust_entry(entry))
    return entry


async def deposit(
    session: AsyncSession, settings: Settings, actor: Principal, case: Case, body: TrustMovement
) -> TrustEntry:
    value = _positive(body.amount, body.currency or settings.billing_currency)
    return await _record(
        session, actor, case, "deposit", value, reference=body.reference, description=body.description
    )


async def withdraw(
    session: AsyncSession, settings: Settings, actor: Principal, case: Case, body: TrustMovement
) -> TrustEntry:
    value = _positive(body.amount, body.currency or settings.billing_currency)
    return await _record(
        session, actor, case, "withdrawal", -value, reference=body.reference, description=body.description
    )


async def transfer_for_invoice(
    session: AsyncSession, actor: Principal, case: Case, *, invoice: Invoice, amount: str, reference: str
) -> TrustEntry:
    """Client money moved to the operating account to pay an approved invoice of this matter
    (the billing domain checks the invoice and records the payment)."""
    value = _positive(amount, invoice.currency)
    return await _record(
        session,
        actor,
        case,
        "transfer",
        -value,
        reference=reference,
        description=f"For invoice {invoice.number or invoice.id}",
        invoice_id=invoice.id,
    )


async def entry_for(session: AsyncSession, principal: Principal, entry_id: str, level: Level) -> TrustEntry:
    return await row_in_case(
        session, principal, TrustEntry, entry_id, level, not_found="Trust entry not found"
    )


async def reverse(
    session: AsyncSession, actor: Principal, case: Case, entry: TrustEntry, body: TrustReversal
) -> TrustEntry:
    """A new entry of the opposite amount. A transfer pays an invoice and is not reversed here
    (record a refund instead); a reversal is not reversed; an entry is reversed once."""
    if entry.kind not in ("deposit", "withdrawal"):
        raise Conflict(f"A {entry.kind} cannot be reversed")
    already = await session.scalar(select(TrustEntry.id).where(TrustEntry.reverses_id == entry.id))
    if already is not None:
        raise Conflict(f"Already reversed by {already}")
    signed = Money.from_minor(-entry.amount_minor, entry.currency)
    return await _record(
        session,
        actor,
        case,
        "reversal",
        signed,
        reference=body.reference,
        description=body.description or f"Reverses {entry.id}",
        reverses_id=entry.id,
    )


async def client_ledger(session: AsyncSession, principal: Principal, query: ListQuery) -> Page[TrustEntry]:
    """Entries across the matters the caller may see (`contact_id=` gives a client's ledger)."""
    visible = select(Case.id).where(visible_to(principal))
    page = await fetch_page(session, TRUST_LIST, query, conditions=[TrustEntry.case_id.in_(visible)])
    await audit.record_read(session, "trust.entries", resource_type="trust")
    return page


async def ledger(session: AsyncSession, case: Case, query: ListQuery) -> tuple[Page[TrustEntry], list[Any]]:
    page = await fetch_page(session, TRUST_LIST, query, conditions=[TrustEntry.case_id == case.id])
    await audit.record_read(
        session, "trust.ledger", resource_type="case", resource_id=case.id, case_id=case.id
    )
    return page, await repository.balances(session, case.id)


def month_end(month: str) -> date:
    try:
        year, number = (int(part) for part in month.split("-"))
        return date(year, number, calendar.monthrange(year, number)[1])
    except ValueError as exc:
        raise ValidationFailed.on("month", "A month as YYYY-MM") from exc


async def reconcile(
    session: AsyncSession, settings: Settings, month: str, bank_balance: str, currency: str | None
) -> dict[str, Any]:
    """Three-way reconciliation at the month's end: the bank statement's balance (as the user
    read it), the trust journal (every entry's amount summed), and the client ledgers (each
    matter's running balance as recorded on its last entry, summed per client). Each difference
    is listed."""
    code = currency or settings.billing_currency
    through = month_end(month)
    try:
        bank = Money.of(bank_balance, check_currency(code))
    except MoneyError as exc:
        raise ValidationFailed.on("bank_balance", str(exc)) from exc
    journal, ledgers = Money.zero(code), Money.zero(code)
    clients: dict[str | None, Money] = {}
    differences: list[dict[str, Any]] = []
    for row in await repository.journal_by_matter(session, code, through):
        matter_journal = Money.from_minor(int(row.journal), code)
        matter_ledger = Money.from_minor(
            await repository.last_balance(session, row.case_id, code, through), code
        )
        journal, ledgers = journal + matter_journal, ledgers + matter_ledger
        clients[row.contact_id] = clients.get(row.contact_id, Money.zero(code)) + matter_ledger
        if matter_ledger != matter_journal:
            differences.append(_difference("matter_ledger_vs_journal", matter_journal, matter_ledger, row))
    if bank != journal:
        differences.append(_difference("bank_vs_journal", journal, bank, None))
    await audit.record_read(session, "trust.reconciliation", resource_type="trust", resource_id=month)
    return {
        "month": month,
        "through": through,
        "currency": code,
        "bank_statement_balance": str(bank.amount),
        "journal_balance": str(journal.amount),
        "client_ledgers_balance": str(ledgers.amount),
        "agrees": not differences,
        "clients": [
            {"contact_id": contact, "balance": str(amount.amount)}
            for contact, amount in sorted(clients.items(), key=lambda kv: kv[0] or "")
        ],
        "differences": differences,
    }


def _difference(kind: str, expected: Money, found: Money, row: Any) -> dict[str, Any]:
    return {
        "kind": kind,
        "case_id": row.case_id if row else None,
        "contact_id": row.contact_id if row else None,
        "expected": str(expected.amount),
        "found": str(found.amount),
        "difference": str((found - expected).amount),
    }
