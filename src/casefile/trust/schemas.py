"""Trust ledger shapes: amounts as decimal strings with their currency."""

from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import Field

from casefile.money import Currency, PositiveAmount
from casefile.money import text as money
from casefile.schemas import InModel, OutModel, Timestamp


class TrustMovement(InModel):
    amount: PositiveAmount = Field(description="More than zero")
    currency: Currency | None = None
    reference: str = Field(min_length=1, max_length=200, description="Bank or cheque reference")
    description: str = Field(default="", max_length=2000, description="Who paid or is paid, and why")


class TrustTransfer(InModel):
    invoice_id: str = Field(max_length=40)
    amount: PositiveAmount
    reference: str = Field(min_length=1, max_length=200)


class TrustReversal(InModel):
    reference: str = Field(min_length=1, max_length=200)
    description: str = Field(default="", max_length=2000)


class TrustEntryOut(OutModel):
    id: str
    case_id: str
    contact_id: str | None
    kind: str
    amount: str
    currency: str
    date: dt.date
    reference: str
    description: str
    invoice_id: str | None
    reverses_id: str | None
    balance_after: str
    recorded_by: str | None
    recorded_at: Timestamp

    @classmethod
    def dump(cls, obj: Any) -> dict[str, Any]:
        values = {name: getattr(obj, name) for name in cls.model_fields if hasattr(obj, name)}
        values |= {
            "date": obj.entry_date,
            "amount": money(obj.amount_minor, obj.currency),
            "balance_after": money(obj.balance_after_minor, obj.currency),
        }
        return cls(**values).model_dump(mode="json")


class BalanceOut(OutModel):
    currency: str
    balance: str


class LedgerDifference(OutModel):
    kind: str  # bank_vs_journal | matter_ledger_vs_journal
    case_id: str | None = None
    contact_id: str | None = None
    expected: str
    found: str
    difference: str
    withheld: bool = Field(
        default=False, description="A matter the caller may not see: counted, its identity left out"
    )


class ReconciliationOut(OutModel):
    month: str
    through: dt.date
    currency: str
    bank_statement_balance: str
    journal_balance: str
    client_ledgers_balance: str
    agrees: bool
    clients: list[dict[str, Any]]
    differences: list[LedgerDifference]
