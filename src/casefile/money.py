"""Money: a Decimal amount with its ISO 4217 currency, never a float (docs/billing.md#money).

Rounding is stated once, here: an amount is rounded to its currency's minor unit (2 places for
USD and EUR, 0 for JPY, 3 for BHD, from the CLDR data Babel ships) half away from zero
(`ROUND_HALF_UP`), at the moment a rule produces it (a time entry's amount, a line's discount
share, an invoice's tax), never when amounts are only added. Stored as an integer count of minor
units with the currency code beside it, so sums in SQL are exact on SQLite as on PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from functools import cache
from typing import Annotated

from babel.numbers import get_currency_precision, list_currencies
from pydantic import Field, WithJsonSchema

ROUNDING = ROUND_HALF_UP
# Inputs beyond this are refused: a firm's amounts fit in a BIGINT of minor units many times over.
MAX_AMOUNT = Decimal("1000000000000")


class MoneyError(ValueError):
    """An amount or currency that is not one (the services turn it into a 422 on the field)."""


@cache
def currencies() -> frozenset[str]:
    return frozenset(list_currencies())


def check_currency(code: str) -> str:
    if code not in currencies():
        raise MoneyError(f"Not an ISO 4217 currency code: {code!r}")
    return code


@cache
def exponent(currency: str) -> int:
    """The number of decimal places of the currency's minor unit."""
    return int(get_currency_precision(check_currency(currency)))


def quantize(amount: Decimal, currency: str) -> Decimal:
    """`amount` rounded half up to the currency's minor unit."""
    return amount.quantize(Decimal(1).scaleb(-exponent(currency)), rounding=ROUNDING)


@dataclass(frozen=True, slots=True)
class Money:
    amount: Decimal
    currency: str

    @classmethod
    def of(cls, amount: Decimal | int | str, currency: str) -> Money:
        """Exact: refuses more decimal places than the currency has, floats and non-numbers."""
        if isinstance(amount, float):
            raise MoneyError("Amounts are decimals, never floats")
        try:
            value = Decimal(amount)
        except (InvalidOperation, TypeError) as exc:
            raise MoneyError(f"Not an amount: {amount!r}") from exc
        if not value.is_finite() or abs(value) >= MAX_AMOUNT:
            raise MoneyError(f"Not an amount: {amount!r}")
        rounded = quantize(value, currency)
        if rounded != value:
            raise MoneyError(f"{currency} has {exponent(currency)} decimal places")
        return cls(rounded, currency)

    @classmethod
    def rounded(cls, amount: Decimal, currency: str) -> Money:
        """What a rule produced (rate x hours, a share of a discount): rounded half up."""
        return cls(quantize(amount, currency), currency)

    @classmethod
    def zero(cls, currency: str) -> Money:
        return cls.rounded(Decimal(0), currency)

    @classmethod
    def from_minor(cls, minor: int, currency: str) -> Money:
        return cls(Decimal(minor).scaleb(-exponent(currency)), currency)

    @property
    def minor(self) -> int:
        return int(self.amount.scaleb(exponent(self.currency)))

    def _same(self, other: Money) -> None:
        if other.currency != self.currency:
            raise MoneyError(f"Cannot mix {self.currency} and {other.currency}")

    def __add__(self, other: Money) -> Money:
        self._same(other)
        return Money(self.amount + other.amount, self.currency)

    def __sub__(self, other: Money) -> Money:
        self._same(other)
        return Money(self.amount - other.amount, self.currency)

    def __neg__(self) -> Money:
        return Money(-self.amount, self.currency)

    def times(self, factor: Decimal) -> Money:
        """Multiplied and rounded half up (rate x hours, subtotal x tax rate)."""
        return Money.rounded(self.amount * factor, self.currency)

    def __str__(self) -> str:
        return f"{self.amount} {self.currency}"


def total(amounts: Iterable[Money], currency: str) -> Money:
    result = Money.zero(currency)
    for amount in amounts:
        result = result + amount
    return result


def allocate(amount: Money, weights: list[int]) -> list[Money]:
    """`amount` split in proportion to `weights` (minor units), the shares summing to it exactly:
    each share rounded down, the minor units left over given to the largest remainders first."""
    if not weights:
        return []
    whole = sum(weights)
    if whole == 0:
        return [Money.zero(amount.currency) for _ in weights]
    sign = -1 if amount.minor < 0 else 1
    target = abs(amount.minor)
    shares = [target * w // whole for w in weights]
    remainders = sorted(range(len(weights)), key=lambda i: -((target * weights[i]) % whole))
    for i in remainders[: target - sum(shares)]:
        shares[i] += 1
    return [Money.from_minor(sign * s, amount.currency) for s in shares]


# In requests and responses an amount is a decimal string ("123.45") beside its currency: a JSON
# number is a float to most readers.
# Exactly what `Money.of` reads: under MAX_AMOUNT (12 digits, leading zeros aside), at most 4
# decimal places (a currency may allow fewer: "JPY has 0 decimal places", a relation to it).
AMOUNT_PATTERN = r"^-?0*\d{1,12}(\.\d{1,4})?$"
Amount = Annotated[str, Field(pattern=AMOUNT_PATTERN, examples=["250.00"])]
# An amount more than zero (a deposit, an expense): the same, with a digit that is not 0.
PositiveAmount = Annotated[
    str,
    Field(
        pattern=r"^0*([1-9]\d{0,11}(\.\d{1,4})?|0\.([1-9]\d{0,3}|0[1-9]\d{0,2}|00[1-9]\d?|000[1-9]))$",
        examples=["250.00"],
    ),
]
Percent = Annotated[str, Field(pattern=r"^\d{1,3}(\.\d{1,4})?$", examples=["10"])]
# Published as the codes accepted (`check_currency`), so that a schema-valid code is never refused.
CURRENCY_SCHEMA = {"type": "string", "enum": sorted(currencies()), "examples": ["USD"]}
Currency = Annotated[str, Field(pattern=r"^[A-Z]{3}$"), WithJsonSchema(CURRENCY_SCHEMA)]
# The same in a query string (the route's `Query` adds the pattern; `check_currency` the rest).
CurrencyText = Annotated[str, WithJsonSchema(CURRENCY_SCHEMA)]


def text(minor: int, currency: str) -> str:
    """Minor units as the decimal string an answer shows."""
    return str(Money.from_minor(minor, currency).amount)
