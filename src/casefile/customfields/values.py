"""A custom field's values: what each type accepts (and how it is shown), what goes in the value
index, and what a `cf.<name>=` filter value means. Pure: the ids of contact and user fields are
checked against the database by the service."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any

from casefile.models import CustomField

# Indexed text stays under PostgreSQL's b-tree entry limit (2,704 bytes) at 4 bytes a character.
MAX_TEXT = 500
MAX_LONG_TEXT = 20_000
# Integers a double holds exactly: the index keeps numbers as doubles on both databases.
MAX_NUMBER = 2**53
MAX_DECIMAL_DIGITS = 30
RANGE = ".."
TEXT_INDEXED = frozenset({"text", "date", "boolean", "single_choice", "multiple_choice", "contact", "user"})
NUMBER_INDEXED = frozenset({"number", "decimal"})
RANGED = frozenset({"number", "decimal", "date"})


@dataclass(frozen=True)
class Indexed:
    """One row of `custom_field_values`."""

    text: str | None = None
    number: float | None = None


class BadValue(ValueError):
    """The message says what the field takes."""


def _decimal(raw: Any) -> Decimal:
    if isinstance(raw, bool) or not isinstance(raw, int | float | str):
        raise BadValue('Expected a decimal number (a number or a string such as "12.50")')
    try:
        value = Decimal(str(raw).strip())
    except InvalidOperation:
        raise BadValue('Expected a decimal number (a number or a string such as "12.50")') from None
    if not value.is_finite() or len(value.as_tuple().digits) > MAX_DECIMAL_DIGITS:
        raise BadValue(f"Expected a finite decimal of at most {MAX_DECIMAL_DIGITS} digits")
    return value


def _date(raw: Any) -> date:
    if isinstance(raw, str) and len(raw) == 10:
        try:
            return date.fromisoformat(raw)
        except ValueError:
            pass
    raise BadValue("Expected a date, YYYY-MM-DD")


def coerce(field: CustomField, raw: Any) -> tuple[Any, list[Indexed]]:
    """The value as stored and shown, and its index rows; BadValue when `raw` is not one."""
    kind = field.field_type
    if kind in ("text", "long_text"):
        limit = MAX_TEXT if kind == "text" else MAX_LONG_TEXT
        if not isinstance(raw, str) or not 0 < len(raw) <= limit:
            raise BadValue(f"Expected text of 1 to {limit} characters")
        return raw, [Indexed(text=raw.lower())] if kind == "text" else []
    if kind == "number":
        if isinstance(raw, bool) or not isinstance(raw, int) or abs(raw) > MAX_NUMBER:
            raise BadValue(f"Expected a whole number between -{MAX_NUMBER} and {MAX_NUMBER}")
        return raw, [Indexed(number=float(raw))]
    if kind == "decimal":
        value = _decimal(raw)
        return format(value, "f"), [Indexed(number=float(value))]
    if kind == "date":
        shown = _date(raw).isoformat()
        return shown, [Indexed(text=shown)]
    if kind == "boolean":
        if not isinstance(raw, bool):
            raise BadValue("Expected true or false")
        return raw, [Indexed(text="true" if raw else "false")]
    if kind == "single_choice":
        if raw not in field.choices:
            raise BadValue(f"Expected one of: {', '.join(field.choices)}")
        return raw, [Indexed(text=raw)]
    if kind == "multiple_choice":
        if not isinstance(raw, list) or not raw or any(c not in field.choices for c in raw):
            raise BadValue(f"Expected a non-empty list of: {', '.join(field.choices)}")
        chosen = list(dict.fromkeys(raw))
        return chosen, [Indexed(text=c) for c in chosen]
    # contact or user: an id, whose existence the service checks
    if not isinstance(raw, str) or not 0 < len(raw) <= 40:
        raise BadValue(f"Expected the id of a {kind}")
    return raw, [Indexed(text=raw)]


@dataclass(frozen=True)
class Wanted:
    """One value of a filter: equal to `text` or `number`, or between `low` and `high` (inclusive,
    either may be open), in the index column of the field's type."""

    equal: str | float | None = None
    low: str | float | None = None
    high: str | float | None = None
    ranged: bool = False


def _scalar(field: CustomField, raw: str) -> str | float:
    kind = field.field_type
    if kind in NUMBER_INDEXED:
        number = float(_decimal(raw))
        if not math.isfinite(number):
            raise BadValue("Expected a number")
        return number
    if kind == "date":
        return _date(raw).isoformat()
    if kind == "boolean":
        if raw not in ("true", "false"):
            raise BadValue("Expected true or false")
        return raw
    if kind in ("single_choice", "multiple_choice") and raw not in field.choices:
        raise BadValue(f"Each value must be one of: {', '.join(field.choices)}")
    return raw.lower() if kind == "text" else raw


def filter_value(field: CustomField, raw: str) -> Wanted:
    """`cf.<name>=` values: exact (text ignoring case), or for numbers, decimals and dates a
    range `low..high` (`10..`, `..2025-12-31`)."""
    if field.field_type == "long_text":
        raise BadValue("Long text is not filterable; search finds it")
    if field.field_type in RANGED and RANGE in raw:
        low, _, high = raw.partition(RANGE)
        return Wanted(
            low=_scalar(field, low) if low else None, high=_scalar(field, high) if high else None, ranged=True
        )
    return Wanted(equal=_scalar(field, raw))
