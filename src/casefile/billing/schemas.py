"""Request and response shapes of time, expenses, rates and invoices. Amounts are decimal strings
("123.45") with their ISO 4217 currency beside them: JSON numbers are floats to most readers."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, JsonValue

from casefile.billing import utbms
from casefile.money import Amount, Currency, Percent, PositiveAmount
from casefile.money import text as money
from casefile.schemas import InModel, OutModel, Timestamp

__all__ = ["Amount", "Currency", "Percent", "money"]
# A UTBMS code of one set, published as that set's enum (the service checks it and names the
# field: "Not a UTBMS task code"); `GET /billing/utbms-codes` lists them with their names.
TaskCode = Annotated[str, Field(max_length=10, json_schema_extra={"enum": sorted(utbms.codes()["task"])})]
ActivityCode = Annotated[
    str, Field(max_length=10, json_schema_extra={"enum": sorted(utbms.codes()["activity"])})
]
ExpenseCode = Annotated[
    str, Field(max_length=10, json_schema_extra={"enum": sorted(utbms.codes()["expense"])})
]
State = Literal["draft", "ready", "billed"]
MAX_TEXT = 10_000


class TimeEntryCreate(InModel):
    """Either `seconds` and `description`, or `text` (quick entry: "1h20 drafted answer")."""

    date: dt.date | None = Field(default=None, description="The day worked; today by default")
    seconds: int | None = Field(default=None, ge=1, le=86_400)
    description: str | None = Field(default=None, max_length=MAX_TEXT)
    text: str | None = Field(default=None, max_length=MAX_TEXT, description="Quick entry, parsed")
    billable: bool = True
    task_code: TaskCode | None = None
    activity_code: ActivityCode | None = None
    state: Literal["draft", "ready"] = "draft"
    user_id: str | None = Field(
        default=None, max_length=40, description="Whose time; the caller's by default"
    )


class TimeEntryUpdate(InModel):
    not_null = ("date", "seconds", "description", "billable", "state")
    date: dt.date | None = None
    seconds: int | None = Field(default=None, ge=1, le=86_400)
    description: str | None = Field(default=None, max_length=MAX_TEXT)
    billable: bool | None = None
    task_code: TaskCode | None = None
    activity_code: ActivityCode | None = None
    state: Literal["draft", "ready"] | None = None


class TimeEntryOut(OutModel):
    id: str
    case_id: str
    user_id: str
    date: dt.date
    seconds: int
    billed_seconds: int
    increment_seconds: int
    hours: str
    description: str
    billable: bool
    rate: str
    rate_source: str
    amount: str
    currency: str
    task_code: str | None
    activity_code: str | None
    state: str
    invoice_id: str | None
    created_at: Timestamp
    updated_at: Timestamp

    @classmethod
    def dump(cls, obj: Any) -> dict[str, Any]:
        from casefile.billing.rules import hours

        return cls(
            id=obj.id,
            case_id=obj.case_id,
            user_id=obj.user_id,
            date=obj.work_date,
            seconds=obj.seconds,
            billed_seconds=obj.billed_seconds,
            increment_seconds=obj.increment_seconds,
            hours=str(hours(obj.billed_seconds).normalize()),
            description=obj.description,
            billable=obj.billable,
            rate=money(obj.rate_minor, obj.currency),
            rate_source=obj.rate_source,
            amount=money(obj.amount_minor, obj.currency),
            currency=obj.currency,
            task_code=obj.task_code,
            activity_code=obj.activity_code,
            state=obj.state,
            invoice_id=obj.invoice_id,
            created_at=obj.created_at,
            updated_at=obj.updated_at,
        ).model_dump(mode="json")


class TimerStart(InModel):
    case_id: str = Field(max_length=40)
    description: str = Field(default="", max_length=MAX_TEXT)


class TimerOut(OutModel):
    id: str
    user_id: str
    case_id: str
    description: str
    running: bool
    elapsed_seconds: int
    created_at: Timestamp


class ExpenseCreate(InModel):
    date: dt.date | None = None
    amount: PositiveAmount
    currency: Currency | None = None
    category: str = Field(min_length=1, max_length=100)
    description: str = Field(default="", max_length=MAX_TEXT)
    expense_code: ExpenseCode | None = None
    receipt_document_id: str | None = Field(default=None, max_length=40)
    billable: bool = True


class ExpenseOut(OutModel):
    id: str
    case_id: str
    user_id: str | None
    date: dt.date
    amount: str
    currency: str
    category: str
    description: str
    expense_code: str | None
    receipt_document_id: str | None
    billable: bool
    state: str
    invoice_id: str | None
    created_at: Timestamp

    @classmethod
    def dump(cls, obj: Any) -> dict[str, Any]:
        values = {name: getattr(obj, name) for name in cls.model_fields if hasattr(obj, name)}
        values |= {"date": obj.spent_on, "amount": money(obj.amount_minor, obj.currency)}
        return cls(**values).model_dump(mode="json")


_GIVEN: dict[str, JsonValue] = {"type": "string", "minLength": 1}
_BOTH_GIVEN: dict[str, JsonValue] = {
    "properties": {"contact_id": _GIVEN, "case_id": _GIVEN},
    "required": ["contact_id", "case_id"],
}


class RateSet(InModel):
    # A client's or a matter's rate, never both (the service says so): published as such.
    model_config = ConfigDict(json_schema_extra={"not": _BOTH_GIVEN})

    user_id: str = Field(max_length=40)
    amount: Annotated[Amount, Field(pattern=r"^0*\d{1,12}(\.\d{1,4})?$")]  # not negative
    currency: Currency | None = None
    contact_id: str | None = Field(default=None, max_length=40, description="For this client only")
    case_id: str | None = Field(default=None, max_length=40, description="For this matter only")


class RateOut(OutModel):
    id: str
    user_id: str
    contact_id: str | None
    case_id: str | None
    amount: str
    currency: str
    updated_at: Timestamp

    @classmethod
    def dump(cls, obj: Any) -> dict[str, Any]:
        values = {name: getattr(obj, name) for name in cls.model_fields if hasattr(obj, name)}
        return cls(**values, amount=money(obj.rate_minor, obj.currency)).model_dump(mode="json")
