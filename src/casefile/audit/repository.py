"""Audit queries: the chain head under its lock, filtered pages, and the whole chain in order."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import ColumnElement, select
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.audit.chain import GENESIS_HASH
from casefile.audit.models import AuditChainHead, AuditEntry
from casefile.listing import CursorQuery, fetch_after

HEAD_ID = 1
VERIFY_BATCH = 1000


async def locked_head(session: AsyncSession) -> AuditChainHead:
    """The chain head, locked until the transaction ends: `FOR UPDATE` on PostgreSQL (a second
    writer waits here, then reads the head the first one committed); on SQLite the writing
    transaction already holds the database's write lock (`BEGIN IMMEDIATE`)."""
    head = await session.get(AuditChainHead, HEAD_ID, with_for_update=True, populate_existing=True)
    if head is None:  # the migration makes it; a schema made another way starts the chain here
        head = AuditChainHead(id=HEAD_ID, last_seq=0, last_hash=GENESIS_HASH)
        session.add(head)
        await session.flush()
    return head


async def head(session: AsyncSession) -> tuple[int, str]:
    found = await session.get(AuditChainHead, HEAD_ID)
    return (found.last_seq, found.last_hash) if found else (0, GENESIS_HASH)


@dataclass(frozen=True)
class AuditFilters:
    actor_id: str | None = None
    case_id: str | None = None
    action: str | None = None
    since: datetime | None = None
    until: datetime | None = None

    def conditions(self) -> list[ColumnElement[bool]]:
        where: list[ColumnElement[bool]] = []
        if self.actor_id is not None:
            where.append(AuditEntry.actor_id == self.actor_id)
        if self.case_id is not None:
            where.append(AuditEntry.case_id == self.case_id)
        if self.action is not None:
            where.append(AuditEntry.action == self.action)
        if self.since is not None:
            where.append(AuditEntry.at >= self.since)
        if self.until is not None:
            where.append(AuditEntry.at < self.until)
        return where


async def page(
    session: AsyncSession, filters: AuditFilters, query: CursorQuery
) -> tuple[list[AuditEntry], str | None]:
    return await fetch_after(session, AuditEntry, AuditEntry.seq, query, conditions=filters.conditions())


async def in_order(
    session: AsyncSession, filters: AuditFilters | None = None, *, up_to: int | None = None
) -> AsyncIterator[AuditEntry]:
    """Every entry (matching `filters`, up to `seq` `up_to`), oldest first, read in batches."""
    conditions = filters.conditions() if filters else []
    if up_to is not None:
        conditions.append(AuditEntry.seq <= up_to)
    after = 0
    while True:
        batch = list(
            (
                await session.scalars(
                    select(AuditEntry)
                    .where(AuditEntry.seq > after, *conditions)
                    .order_by(AuditEntry.seq)
                    .limit(VERIFY_BATCH)
                )
            ).all()
        )
        for entry in batch:
            yield entry
        if len(batch) < VERIFY_BATCH:
            return
        after = batch[-1].seq
        session.expunge_all()  # a long chain is read in constant memory
