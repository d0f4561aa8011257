"""The builders of the billing and trust events' `data` (names in `events.catalogue`): amounts as
decimal strings with their currency, never floats; descriptions left out (they may be privileged)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from casefile.clock import format_timestamp, utcnow
from casefile.events.billing_schemas import (
    ExpenseCreated,
    InvoiceData,
    PaymentRecorded,
    TimeEntryData,
    TrustEntryData,
)
from casefile.money import text

if TYPE_CHECKING:
    from casefile.models import Expense, Invoice, InvoicePayment, TimeEntry, TrustEntry


_money = text


def time_entry(entry: TimeEntry, actor: str | None) -> TimeEntryData:
    return {
        "time_entry_id": entry.id,
        "case_id": entry.case_id,
        "user_id": entry.user_id,
        "date": entry.work_date.isoformat(),
        "seconds": entry.seconds,
        "billed_seconds": entry.billed_seconds,
        "amount": _money(entry.amount_minor, entry.currency),
        "currency": entry.currency,
        "state": entry.state,
        "by": actor,
    }


def expense_created(expense: Expense, actor: str | None) -> ExpenseCreated:
    return {
        "expense_id": expense.id,
        "case_id": expense.case_id,
        "amount": _money(expense.amount_minor, expense.currency),
        "currency": expense.currency,
        "category": expense.category,
        "by": actor,
    }


def invoice(invoice: Invoice, actor: str | None) -> InvoiceData:
    return {
        "invoice_id": invoice.id,
        "case_id": invoice.case_id,
        "number": invoice.number,
        "state": invoice.state,
        "total": _money(invoice.total_minor, invoice.currency),
        "paid": _money(invoice.paid_minor, invoice.currency),
        "currency": invoice.currency,
        "by": actor,
        "at": format_timestamp(utcnow()),
    }


def payment_recorded(invoice_row: Invoice, payment: InvoicePayment, actor: str | None) -> PaymentRecorded:
    return {
        **invoice(invoice_row, actor),
        "payment_id": payment.id,
        "amount": _money(payment.amount_minor, payment.currency),
        "method": payment.method,
    }


def trust_entry(entry: TrustEntry) -> TrustEntryData:
    return {
        "trust_entry_id": entry.id,
        "case_id": entry.case_id,
        "contact_id": entry.contact_id,
        "kind": entry.kind,
        "amount": _money(entry.amount_minor, entry.currency),
        "currency": entry.currency,
        "balance_after": _money(entry.balance_after_minor, entry.currency),
        "reference": entry.reference,
        "invoice_id": entry.invoice_id,
        "reverses_id": entry.reverses_id,
        "recorded_by": entry.recorded_by,
        "date": entry.entry_date.isoformat(),
    }
