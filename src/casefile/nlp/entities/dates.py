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
# Months as written, capitalised or in capitals ("ARGUED MARCH 31, 2009").
_MONTH = (
    r"(?P<month>(?i:January|February|March|April|May|June|July|August|September|October|November|December)"
    r"|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec|JAN|FEB|MAR|APR|JUN|JUL|AUG|SEPT|SEP|OCT|NOV|DEC)\.?"
)
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:1[89]|20|21)\d\d)"
# A month may be glued to the word before it by the extraction: "January11", "FILEDSep 13, 2019".
_START = r"(?:\b|(?<=[a-z])|(?<=[A-Z]{3}))"
# ... and a year to the word after it: "Effective Dates: ... August 31, 2007Watchit agrees".
_END = r"(?:\b|(?=[A-Z][a-z]))"
# Pleading paper numbers its lines, and a date broken across two of them carries the next line's
# number: "from September 16,\n10 2004 to".
# A comma may be glued to the year: "June 1,2019".
_GAP = r"(?:,?\s*\n\s*[1-9]\d?\s+|,?\s+|,(?=\d{4}))"
# "April 25 and 26, 1996", "June 3-5, 2024": a range of days gives each date it names at its ends.
_DAY_RANGE = re.compile(
    rf"{_START}{_MONTH}\s*(?P<first>[0-3]?\d)(?:st|nd|rd|th)?\s*(?:and|&|-|\u2013|to|through)\s*"
    rf"(?P<last>[0-3]?\d)(?:st|nd|rd|th)?,?\s+{_YEAR}\b"
)
_DATE_PATTERNS = [
    re.compile(rf"{_START}{_MONTH}\s*{_DAY}{_GAP}{_YEAR}{_END}"),  # March 3, 2024; glued "January11, 2018"
    # 3 March 2024, 3rd day of March, 2024
    re.compile(rf"\b{_DAY}\s+(?:day\s+of\s*)?{_MONTH},?\s+{_YEAR}{_END}"),
    # "the 22nd of May, 2008", "the 23rd of January of 1996"
    re.compile(rf"\b{_DAY}\s+of\s+{_MONTH},?\s+(?:of\s+)?{_YEAR}{_END}"),
    re.compile(rf"\b{_YEAR}(?P<ymd>[-/])(?P<m>[01]?\d)(?P=ymd)(?P<d>[0-3]?\d)\b"),  # 2024-05-17, 2024/05/17
    re.compile(rf"\b{_DAY}-{_MONTH}-{_YEAR}\b"),  # 17-May-2024, 17-MAY-2024
    re.compile(
        r"\b(?P<a>[0-3]?\d)(?P<sep>[/-])(?P<b>[0-3]?\d)(?P=sep)(?P<year>(?:19|20|21)\d\d)\b"
    ),  # 05/01/2024
    re.compile(r"\b(?P<d>[0-3]?\d)\.(?P<m>[01]?\d)\.(?P<year>(?:19|20|21)\d\d)\b"),  # 15.06.2024
    # Two-digit years, with slashes only ("Filed 04/16/21"): 00-49 are 2000s, 50-99 1900s.
    re.compile(r"(?<![\d/])(?P<a>[01]?\d)/(?P<b>[0-3]?\d)/(?P<year>\d\d)(?![\d/])"),
]


def find_dates(pages: list[Page]) -> list[dict[str, Any]]:
    found = find_by_patterns(pages, _DATE_PATTERNS, _date_entry)
    known = {item["value"]: item for item in found}
    for page in pages:
        for match in _DAY_RANGE.finditer(page.text):
            month, year = _MONTHS[match.group("month").lower().rstrip(".")], int(match.group("year"))
            for group in ("first", "last"):
                try:
                    iso = date(year, month, int(match.group(group))).isoformat()
                except ValueError:
                    continue
                occurrence = {"page": page.number, "start": match.start(group), "end": match.end(group)}
                if iso in known:
                    if occurrence not in known[iso]["occurrences"]:
                        known[iso]["occurrences"].append(occurrence)
                else:
                    known[iso] = {"text": match.group(0), "value": iso, "occurrences": [occurrence]}
                    found.append(known[iso])
    return found


def _date_entry(match: re.Match[str]) -> tuple[str, str] | None:
    value = _date_value(match)
    if value is None:
        return None
    iso = value.isoformat()
    return iso, iso


def _date_value(match: re.Match[str]) -> date | None:
    groups = match.groupdict()
    year = int(groups["year"])
    if year < 100:
        year += 2000 if year < 50 else 1900
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
