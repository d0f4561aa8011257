"""Money: amounts with their ISO 4217 currency (conventions in the package docstring)."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any

from ..types import Page
from .base import find_by_patterns

_SYMBOLS = {"$": "USD", "US$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "C$": "CAD", "A$": "AUD"}
_CODES = {"USD", "EUR", "GBP", "CHF", "JPY", "CAD", "AUD"}
# A bare "pounds" is as often a weight as money: only "pounds sterling" counts.
_WORDS = {"dollars": "USD", "euros": "EUR", "euro": "EUR", "pounds sterling": "GBP"}
_NUMBER = r"(?P<number>\d{1,3}(?:[,.\u00a0 ]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?)"
_SCALE = r"(?:\s*(?P<scale>million|billion|thousand|mn|bn|m|k)\b)?"
_MONEY_PATTERNS = [
    re.compile(rf"(?P<cur>US\$|C\$|A\$|[$€£¥])\s?{_NUMBER}{_SCALE}"),
    re.compile(rf"\b(?P<cur>USD|EUR|GBP|CHF|JPY|CAD|AUD)\s?{_NUMBER}{_SCALE}"),
    re.compile(
        rf"{_NUMBER}{_SCALE}\s?(?P<cur>USD|EUR|GBP|CHF|JPY|CAD|AUD|dollars|euros|euro|pounds sterling)\b"
    ),
]
_SCALES = {"thousand": 1_000, "k": 1_000, "million": 1_000_000, "mn": 1_000_000, "m": 1_000_000}
_SCALES |= {"billion": 1_000_000_000, "bn": 1_000_000_000}


_UNITS = {
    word: n
    for n, word in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
        ]
    )
}
_TENS = {
    w: 10 * (i + 2)
    for i, w in enumerate(["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"])
}
_MULTIPLIERS = {"thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
_NUMBER_WORD = "|".join([*_UNITS, *_TENS, "hundred", *_MULTIPLIERS])
# "one million dollars", "Two Hundred Fifty Thousand Dollars ($250,000)", "twenty-five dollars".
_MONEY_IN_WORDS = re.compile(
    rf"(?i:\b(?P<words>(?:{_NUMBER_WORD})(?:(?:[ -]|[ ]and[ ])(?:{_NUMBER_WORD}))*)"
    r"[ ](?:(?:U\.S\.|United States)[ ])?(?P<cur>dollars|euros|pounds sterling)\b)"
)


def _words_value(words: str) -> int | None:
    total, current = 0, 0
    for word in re.split(r"[ -]+", words.lower()):
        if word == "and":
            continue
        if word in _UNITS:
            current += _UNITS[word]
        elif word in _TENS:
            current += _TENS[word]
        elif word == "hundred":
            current = max(current, 1) * 100
        elif word in _MULTIPLIERS:
            total += max(current, 1) * _MULTIPLIERS[word]
            current = 0
        else:
            return None
    return total + current or None


def _money_in_words_entry(match: re.Match[str]) -> tuple[str, dict[str, str]] | None:
    amount = _words_value(match.group("words"))
    if amount is None:
        return None
    currency = _WORDS[match.group("cur").lower()]
    value = {"amount": f"{Decimal(amount).quantize(Decimal('0.01'))}", "currency": currency}
    return f"{value['currency']} {value['amount']}", value


def find_money(pages: list[Page]) -> list[dict[str, Any]]:
    found = find_by_patterns(pages, _MONEY_PATTERNS, _money_entry)
    known = {f"{item['value']['currency']} {item['value']['amount']}" for item in found}
    # Amounts in words: the figures beside them, when given, were found above.
    in_words = find_by_patterns(pages, [_MONEY_IN_WORDS], _money_in_words_entry)
    return found + [
        item for item in in_words if f"{item['value']['currency']} {item['value']['amount']}" not in known
    ]


def _money_entry(match: re.Match[str]) -> tuple[str, dict[str, str]] | None:
    amount = _parse_number(match.group("number"))
    if amount is None:
        return None
    # "$4.8 million": a scale word multiplies; a bare "m" only right after a number.
    scale = (match.group("scale") or "").lower()
    amount *= _SCALES.get(scale, 1)
    cur = match.group("cur")
    currency = _SYMBOLS.get(cur) or (cur if cur in _CODES else _WORDS.get(cur.lower(), "USD"))
    value = {"amount": f"{amount.quantize(Decimal('0.01'))}", "currency": currency}
    return f"{value['currency']} {value['amount']}", value


def _parse_number(raw: str) -> Decimal | None:
    raw = raw.replace("\u00a0", "").replace(" ", "")
    last_dot, last_comma = raw.rfind("."), raw.rfind(",")
    if last_dot >= 0 and last_comma >= 0:
        decimal_mark = "." if last_dot > last_comma else ","
    elif last_comma >= 0:
        # "1,250" is a thousand separator; "12,50" is a decimal comma.
        decimal_mark = "," if len(raw) - last_comma - 1 in (1, 2) else ""
    elif last_dot >= 0:
        # "5.000.000" groups thousands; "4.25" is a decimal point.
        decimal_mark = "" if raw.count(".") > 1 or (len(raw) - last_dot - 1 == 3 and raw[0] != "0") else "."
    else:
        decimal_mark = ""
    thousands = {",": ".", ".": ",", "": ".,"}[decimal_mark]
    cleaned = raw.translate({ord(c): None for c in thousands})
    if decimal_mark == ",":
        cleaned = cleaned.replace(",", ".")
    try:
        return Decimal(cleaned)
    except InvalidOperation:
        return None
