"""The arithmetic of billing, apart from the database so that it is tested on its own (the
Hypothesis properties in tests/billing/test_money.py): billed time, a fee, an invoice's totals.

Stated rounding (docs/billing.md#money): time is rounded *up* to the firm's increment (6 minutes
bills 0.1 h: the convention of the bar); a fee is rate x billed hours rounded half up to the
minor unit once per entry; an invoice's discount is its percentage of the subtotal rounded half
up, then allocated over the lines so that the lines' shares sum to it exactly; tax is its
percentage of the taxable amount (subtotal - discount - write-offs) rounded half up, once."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from casefile.money import Money, allocate, total


def billed_seconds(seconds: int, increment_seconds: int) -> int:
    """Rounded up to the increment (a 1-second call bills one increment)."""
    return -(-seconds // increment_seconds) * increment_seconds


def hours(seconds: int) -> Decimal:
    return (Decimal(seconds) / Decimal(3600)).quantize(Decimal("0.0001"))


def fee(rate: Money, seconds: int) -> Money:
    return Money.rounded(rate.amount * Decimal(seconds) / Decimal(3600), rate.currency)


@dataclass(frozen=True)
class LineTotals:
    amount: Money
    discount: Money
    write_off: Money

    @property
    def net(self) -> Money:
        return self.amount - self.discount - self.write_off


@dataclass(frozen=True)
class InvoiceTotals:
    lines: list[LineTotals]
    subtotal: Money
    discount: Money
    write_off: Money
    tax: Money
    total: Money


def invoice_totals(
    amounts: list[Money],
    write_offs: list[Money],
    discount_percent: Decimal,
    tax_percent: Decimal,
    currency: str,
) -> InvoiceTotals:
    """The totals of lines `amounts` (each with its write-off), with the invoice's discount
    allocated over the lines in proportion to what is left of each after its write-off."""
    subtotal = total(amounts, currency)
    written_off = total(write_offs, currency)
    remaining = [a - w for a, w in zip(amounts, write_offs, strict=True)]
    discount = total(remaining, currency).times(discount_percent / 100)
    shares = allocate(discount, [max(r.minor, 0) for r in remaining])
    lines = [LineTotals(a, d, w) for a, d, w in zip(amounts, shares, write_offs, strict=True)]
    taxable = subtotal - discount - written_off
    tax = taxable.times(tax_percent / 100)
    return InvoiceTotals(lines, subtotal, discount, written_off, tax, taxable + tax)


def aging_bucket(days_overdue: int) -> str:
    """AR aging by days since the invoice date: 0-30, 31-60, 61-90, 90+."""
    if days_overdue <= 30:
        return "0-30"
    if days_overdue <= 60:
        return "31-60"
    if days_overdue <= 90:
        return "61-90"
    return "90+"
