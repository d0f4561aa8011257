"""Money done right: decimals with an ISO 4217 currency, rounding as stated (docs/billing.md#money),
the quick-entry parser, and totals that add up on every invoice (Hypothesis properties)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casefile.billing import quick_entry, rules
from casefile.money import Money, MoneyError, allocate, total

USD = "USD"


def test_amounts_are_exact_decimals_in_an_iso_currency() -> None:
    assert Money.of("0.10", USD) + Money.of("0.20", USD) == Money.of("0.30", USD)
    assert Money.of("1500", "JPY").minor == 1500  # no minor unit
    assert Money.of("1.234", "BHD").minor == 1234  # three decimals
    assert Money.from_minor(12345, USD).amount == Decimal("123.45")
    with pytest.raises(MoneyError, match="2 decimal places"):
        Money.of("0.001", USD)
    with pytest.raises(MoneyError, match="ISO 4217"):
        Money.of("1", "XYZ")
    with pytest.raises(MoneyError, match="never floats"):
        Money.of(0.1, USD)  # type: ignore[arg-type]
    with pytest.raises(MoneyError, match="Cannot mix"):
        Money.of("1", USD) + Money.of("1", "EUR")


def test_rounding_is_half_up_to_the_minor_unit() -> None:
    assert Money.rounded(Decimal("0.005"), USD).amount == Decimal("0.01")
    assert Money.rounded(Decimal("0.0049"), USD).amount == Decimal("0.00")
    assert Money.rounded(Decimal("-0.005"), USD).amount == Decimal("-0.01")  # away from zero
    assert Money.rounded(Decimal("2.5"), "JPY").amount == Decimal("3")
    # 6-minute increments: 1 second bills 0.1 h; 61 minutes bill 1.1 h.
    assert rules.billed_seconds(1, 360) == 360 and rules.billed_seconds(61 * 60, 360) == 66 * 60
    # $333.33/h for 0.1 h is 33.333 -> 33.33; $250/h for 0.3 h is 75.00.
    assert rules.fee(Money.of("333.33", USD), 360) == Money.of("33.33", USD)
    assert rules.fee(Money.of("250", USD), 1080) == Money.of("75.00", USD)
    # A discount of 1/3 of a cent per line is allocated so that the lines sum to the whole.
    assert allocate(Money.of("0.10", USD), [1, 1, 1]) == [
        Money.of("0.04", USD),
        Money.of("0.03", USD),
        Money.of("0.03", USD),
    ]


@pytest.mark.parametrize(
    ("line", "seconds", "description"),
    [
        ("1h20 drafted answer to motion", 4800, "drafted answer to motion"),
        ("0.3 call with client", 1080, "call with client"),
        ("1:15 review of contract", 4500, "review of contract"),
        ("45m research", 2700, "research"),
        ("1.5h hearing", 5400, "hearing"),
        ("2 hours travel to court", 7200, "travel to court"),
        ("1h 5m - email", 3900, "email"),
    ],
)
def test_quick_entry(line: str, seconds: int, description: str) -> None:
    assert quick_entry.parse(line) == quick_entry.QuickEntry(seconds, description)


@pytest.mark.parametrize("line", ["drafted answer", "1h20", "0 nothing", "30h too long", ""])
def test_quick_entry_refuses(line: str) -> None:
    with pytest.raises(quick_entry.NotUnderstood):
        quick_entry.parse(line)


cents = st.integers(min_value=0, max_value=10_000_000)
percent = st.decimals(min_value=0, max_value=100, places=2, allow_nan=False, allow_infinity=False)


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(st.tuples(cents, st.integers(0, 100)), min_size=1, max_size=30),
    discount=percent,
    tax=percent,
    payments=st.lists(st.integers(min_value=1, max_value=5_000_000), max_size=6),
)
def test_invoice_totals_add_up(
    lines: list[tuple[int, int]], discount: Decimal, tax: Decimal, payments: list[int]
) -> None:
    amounts = [Money.from_minor(a, USD) for a, _ in lines]
    write_offs = [Money.from_minor(a * pct // 100, USD) for a, pct in lines]  # part of each line
    totals = rules.invoice_totals(amounts, write_offs, discount, tax, USD)
    # The lines add up to every figure of the invoice, to the cent.
    assert totals.subtotal == total(amounts, USD)
    assert total((line.discount for line in totals.lines), USD) == totals.discount
    assert total((line.write_off for line in totals.lines), USD) == totals.write_off
    assert total((line.net for line in totals.lines), USD) + totals.tax == totals.total
    assert totals.total == totals.subtotal - totals.discount - totals.write_off + totals.tax
    # Each line's discount share is within a cent of its exact share and never makes it negative.
    remaining = sum(a.minor - w.minor for a, w in zip(amounts, write_offs, strict=True))
    for line in totals.lines:
        assert line.net.minor >= 0
        if remaining:
            exact = Decimal(totals.discount.minor) * (line.amount.minor - line.write_off.minor) / remaining
            assert abs(Decimal(line.discount.minor) - exact) < 1
    # Payments (each at most the balance) leave a balance that is the total less what was paid.
    balance, paid = totals.total, []
    for amount in payments:
        payment = min(Money.from_minor(amount, USD), balance, key=lambda m: m.minor)
        paid.append(payment)
        balance = balance - payment
        assert balance.minor >= 0
    assert balance + total(paid, USD) == totals.total


@settings(max_examples=300, deadline=None)
@given(
    amount=st.integers(-10_000_000, 10_000_000),
    weights=st.lists(st.integers(0, 10**9), min_size=1, max_size=20),
)
def test_allocation_is_exact(amount: int, weights: list[int]) -> None:
    shares = allocate(Money.from_minor(amount, USD), weights)
    if sum(weights):
        assert total(shares, USD) == Money.from_minor(amount, USD)
    assert all(s.minor == 0 for s, w in zip(shares, weights, strict=True) if w == 0 and sum(weights))
