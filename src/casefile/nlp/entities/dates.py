"""Dates: full calendar dates only, as ISO `YYYY-MM-DD` (conventions in the package docstring)."""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from ..types import Page
from .base import find_by_patterns

_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_MONTH = (
    r"(?P<month>January|February|March|April|May|June|July|August|September|October|November|December"
    r"|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\.?"
)
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:1[89]|20|21)\d\d)"
_DATE_PATTERNS = [
    re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b"),  # March 3, 2024
    re.compile(rf"\b{_DAY}\s+(?:day\s+of\s+)?{_MONTH},?\s+{_YEAR}\b"),  # 3 March 2024, 3rd day of March, 2024
    re.compile(rf"\b{_YEAR}-(?P<m>[01]?\d)-(?P<d>[0-3]?\d)\b"),  # 2024-05-17
    re.compile(
        r"\b(?P<a>[0-3]?\d)(?P<sep>[/-])(?P<b>[0-3]?\d)(?P=sep)(?P<year>(?:19|20|21)\d\d)\b"
    ),  # 05/01/2024
    re.compile(r"\b(?P<d>[0-3]?\d)\.(?P<m>[01]?\d)\.(?P<year>(?:19|20|21)\d\d)\b"),  # 15.06.2024
]


def find_dates(pages: list[Page]) -> list[dict[str, Any]]:
    return find_by_patterns(pages, _DATE_PATTERNS, _date_entry)


def _date_entry(match: re.Match[str]) -> tuple[str, str] | None:
    value = _date_value(match)
    if value is None:
        return None
    iso = value.isoformat()
    return iso, iso


def _date_value(match: re.Match[str]) -> date | None:
    groups = match.groupdict()
    year = int(groups["year"])
    if groups.get("month"):
        month, day = _MONTHS[groups["month"].lower().rstrip(".")], int(groups["day"])
    elif groups.get("a"):
        first, second = int(groups["a"]), int(groups["b"])
        # US month-first, unless the first number cannot be a month.
        month, day = (first, second) if first <= 12 else (second, first)
    else:
        month, day = int(groups["m"]), int(groups["d"])
    try:
        return date(year, month, day)
    except ValueError:
        return None
