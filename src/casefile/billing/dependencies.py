"""The billing permissions as dependencies (listed first on a path, before the case it names)."""

from __future__ import annotations

from datetime import date
from typing import Annotated

from fastapi import Depends
from pydantic import WithJsonSchema
from sqlalchemy import Select, select

from casefile.access.matter import visible_to
from casefile.auth.dependencies import Require
from casefile.auth.permissions import Permission, Principal
from casefile.errors import ValidationFailed
from casefile.models import Case
from casefile.money import MoneyError, check_currency

BillingRead = Annotated[Principal, Depends(Require(Permission.READ_BILLING))]
BillingWrite = Annotated[Principal, Depends(Require(Permission.WRITE_BILLING))]
BillingApprove = Annotated[Principal, Depends(Require(Permission.APPROVE_BILLING))]


def visible_cases(principal: Principal) -> Select[tuple[str]]:
    """The ids of the cases the caller may see, for lists across matters."""
    return select(Case.id).where(visible_to(principal))  # type: ignore[return-value]


# A day in the query string, read strictly: `date` alone would take `0` as a Unix time (1970-01-01).
# Published as a date (RFC 3339 full-date), which is what `query_day` accepts.
DAY_PATTERN = r"^\d{4}-\d{2}-\d{2}$"
DayText = Annotated[str, WithJsonSchema({"type": "string", "format": "date"})]


def query_day(value: str, field: str) -> date:
    """`YYYY-MM-DD` as a date, or 422 naming `field`."""
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ValidationFailed.on(field, "Must be a date (YYYY-MM-DD)") from None


def query_currency(value: str, field: str = "currency") -> str:
    """An ISO 4217 code, or 422 naming `field`."""
    try:
        return check_currency(value)
    except MoneyError as exc:
        raise ValidationFailed.on(field, str(exc)) from None
