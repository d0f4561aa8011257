"""The trust ledger's queries: list spec, the balance row (locked), a month's sums."""

from __future__ import annotations

from datetime import date
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.listing import ListSpec
from casefile.models import TRUST_KINDS, Case, Party, TrustBalance, TrustEntry
from casefile.trust.schemas import TrustEntryOut

TRUST_LIST = ListSpec(
    model=TrustEntry,
    sortable={"recorded_at": TrustEntry.recorded_at, "date": TrustEntry.entry_date},
    default_sort="recorded_at",
    tiebreak=TrustEntry.id,
    output_fields=frozenset(TrustEntryOut.model_fields),
    filters={"kind": TrustEntry.kind, "currency": TrustEntry.currency, "contact_id": TrustEntry.contact_id},
    filter_choices={"kind": TRUST_KINDS},
)


async def client_of(session: AsyncSession, case: Case) -> str | None:
    """The case's client: its first party with the role `client`."""
    statement = (
        select(Party.contact_id)
        .where(Party.case_id == case.id, Party.role == "client")
        .order_by(Party.created_at, Party.id)
        .limit(1)
    )
    return await session.scalar(statement)


async def locked_balance(session: AsyncSession, case_id: str, currency: str) -> TrustBalance:
    """The matter's balance row, locked until the transaction ends (FOR UPDATE on PostgreSQL; on
    SQLite the write transaction holds the database). Made at zero on the first deposit."""
    statement = (
        select(TrustBalance)
        .where(TrustBalance.case_id == case_id, TrustBalance.currency == currency)
        .with_for_update()
        .execution_options(populate_existing=True)
    )
    row = await session.scalar(statement)
    if row is None:
        row = TrustBalance(case_id=case_id, currency=currency, balance_minor=0)
        session.add(row)
        await session.flush()
    return row


async def balances(session: AsyncSession, case_id: str) -> list[TrustBalance]:
    statement = select(TrustBalance).where(TrustBalance.case_id == case_id).order_by(TrustBalance.currency)
    return list((await session.scalars(statement)).all())


async def journal_by_matter(session: AsyncSession, currency: str, through: date) -> list[Any]:
    """Per matter (and its client): the sum of its entries through `through`, and the running
    balance recorded on its last entry then (the matter's ledger as it was kept)."""
    sums = (
        select(
            TrustEntry.case_id,
            func.max(TrustEntry.contact_id).label("contact_id"),
            func.sum(TrustEntry.amount_minor).label("journal"),
            func.count().label("entries"),
        )
        .where(TrustEntry.currency == currency, TrustEntry.entry_date <= through)
        .group_by(TrustEntry.case_id)
        .order_by(TrustEntry.case_id)
    )
    return list((await session.execute(sums)).all())


async def last_balance(session: AsyncSession, case_id: str, currency: str, through: date) -> int:
    statement = (
        select(TrustEntry.balance_after_minor)
        .where(
            TrustEntry.case_id == case_id, TrustEntry.currency == currency, TrustEntry.entry_date <= through
        )
        .order_by(TrustEntry.recorded_at.desc(), TrustEntry.id.desc())
        .limit(1)
    )
    return int(await session.scalar(statement) or 0)
