"""Request and response shapes of invoices, their lines and payments, and the AR aging report."""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import Field

from casefile.billing.schemas import Amount, Percent, money
from casefile.money import PositiveAmount
from casefile.schemas import InModel, OutModel, Timestamp


class InvoiceCreate(InModel):
    start: dt.date = Field(description="First day of the period whose unbilled time and expenses are billed")
    end: dt.date
    discount_percent: Percent = "0"
    tax_percent: Percent | None = Field(default=None, description="The firm's setting by default")


class InvoiceUpdate(InModel):
    """A draft only."""

    discount_percent: Percent | None = None
    tax_percent: Percent | None = None


class LineUpdate(InModel):
    write_off: Amount = Field(description="What of this line the firm does not bill")


class PaymentCreate(InModel):
    amount: PositiveAmount = Field(description="More than zero, at most the invoice's balance")
    date: dt.date | None = None
    method: Literal["bank", "card", "cash", "check"] = "bank"
    reference: str = Field(default="", max_length=200)


class LineOut(OutModel):
    id: str
    position: int
    kind: str
    source_id: str
    date: dt.date
    description: str
    user_id: str | None
    units: str
    unit_cost: str
    amount: str
    discount: str
    write_off: str
    net: str
    task_code: str | None
    activity_code: str | None
    expense_code: str | None

    @classmethod
    def build(cls, line: Any, currency: str) -> dict[str, Any]:
        net = line.amount_minor - line.discount_minor - line.write_off_minor
        return cls(
            **{name: getattr(line, name) for name in cls.model_fields if hasattr(line, name)},
            date=line.work_date,
            unit_cost=money(line.unit_cost_minor, currency),
            amount=money(line.amount_minor, currency),
            discount=money(line.discount_minor, currency),
            write_off=money(line.write_off_minor, currency),
            net=money(net, currency),
        ).model_dump(mode="json")


class InvoiceOut(OutModel):
    id: str
    case_id: str
    number: str | None
    state: str
    currency: str
    start: dt.date
    end: dt.date
    discount_percent: str
    tax_percent: str
    subtotal: str
    discount: str
    write_off: str
    tax: str
    total: str
    paid: str
    balance: str
    issued_on: dt.date | None
    due_on: dt.date | None
    created_by: str | None
    approved_by: str | None
    created_at: Timestamp
    updated_at: Timestamp
    lines: list[dict[str, Any]] | None = None

    @classmethod
    def dump(cls, obj: Any, lines: list[Any] | None = None) -> dict[str, Any]:
        c = obj.currency
        values = {name: getattr(obj, name) for name in cls.model_fields if hasattr(obj, name)}
        values |= {
            "start": obj.period_start,
            "end": obj.period_end,
            "subtotal": money(obj.subtotal_minor, c),
            "discount": money(obj.discount_minor, c),
            "write_off": money(obj.write_off_minor, c),
            "tax": money(obj.tax_minor, c),
            "total": money(obj.total_minor, c),
            "paid": money(obj.paid_minor, c),
            "balance": money(obj.total_minor - obj.paid_minor, c),
            "lines": None if lines is None else [LineOut.build(line, c) for line in lines],
        }
        return cls(**values).model_dump(mode="json")


class PaymentOut(OutModel):
    id: str
    invoice_id: str
    amount: str
    currency: str
    date: dt.date
    method: str
    reference: str
    trust_entry_id: str | None
    recorded_by: str | None

    @classmethod
    def dump(cls, obj: Any) -> dict[str, Any]:
        values = {name: getattr(obj, name) for name in cls.model_fields if hasattr(obj, name)}
        values |= {"date": obj.paid_on, "amount": money(obj.amount_minor, obj.currency)}
        return cls(**values).model_dump(mode="json")


class AgingRow(OutModel):
    case_id: str
    invoice_id: str
    number: str | None
    issued_on: dt.date
    days: int
    bucket: str
    balance: str
    currency: str


class AgingOut(OutModel):
    as_of: dt.date
    currency: str
    buckets: dict[str, str]
    total: str
    invoices: list[AgingRow]
