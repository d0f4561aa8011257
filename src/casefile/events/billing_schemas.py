"""What the billing and trust events' `data` hold (their builders: `events.billing_payloads`):
amounts are decimal strings with their currency."""

from __future__ import annotations

from typing_extensions import TypedDict  # pydantic reads TypedDicts of typing_extensions before 3.12


class TimeEntryData(TypedDict):
    time_entry_id: str
    case_id: str
    user_id: str
    date: str
    seconds: int
    billed_seconds: int
    amount: str
    currency: str
    state: str
    by: str | None


class ExpenseCreated(TypedDict):
    expense_id: str
    case_id: str
    amount: str
    currency: str
    category: str
    by: str | None


class InvoiceData(TypedDict):
    invoice_id: str
    case_id: str
    number: str | None
    state: str
    total: str
    paid: str
    currency: str
    by: str | None
    at: str


class PaymentRecorded(InvoiceData):
    payment_id: str
    amount: str
    method: str


class TrustEntryData(TypedDict):
    trust_entry_id: str
    case_id: str
    contact_id: str | None
    kind: str
    amount: str
    currency: str
    balance_after: str
    reference: str
    invoice_id: str | None
    reverses_id: str | None
    recorded_by: str | None
    date: str
