"""Audit queries: the chain head under its lock, filtered pages, and the whole chain in order."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import ColumnElement, Table, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from casefile.audit.chain import GENESIS_HASH
from casefile.audit.schemas import AuditEntryOut
from casefile.listing import ListQuery, ListSpec, fetch_next
from casefile.models import AuditChainHead, AuditEntry

HEAD_ID = 1
VERIFY_BATCH = 1000
_HEAD = cast(Table, AuditChainHead.__table__)
_ENTRIES = cast(Table, AuditEntry.__table__)
# Built once: building a statement cost more CPU than running it (every read appends an entry),
# and the same object keeps its compiled form's cache key between executions.
_LOCKED_HEAD = select(_HEAD.c.last_seq, _HEAD.c.last_hash).where(_HEAD.c.id == HEAD_ID).with_for_update()
_INSERT_ENTRIES = insert(_ENTRIES)


async def locked_head(session: AsyncSession | AsyncConnection) -> tuple[int, str]:
    """The chain head's last number and hash, locked until the transaction ends: `FOR UPDATE` on
    PostgreSQL (a second writer waits here, then reads the head the first one committed); on
    SQLite the writing transaction already holds the database's write lock (`BEGIN IMMEDIATE`)."""
    found = (await session.execute(_LOCKED_HEAD)).first()
    if found is None:  # the migration makes it; a schema made another way starts the chain here
        await session.execute(insert(_HEAD).values(id=HEAD_ID, last_seq=0, last_hash=GENESIS_HASH))
        return 0, GENESIS_HASH
    return found.last_seq, found.last_hash


async def append(session: AsyncSession | AsyncConnection, entries: list[dict[str, Any]]) -> None:
    """Insert chained entries (their `seq`, `prev_hash` and `hash` set), under the head's lock
    (`locked_head`). The head moves to the last of them with the INSERT: a trigger on
    `audit_entries` (migration 0015) moves it forward, one statement less under the lock. A Core
    statement, one for all the entries: they are never read back, so the ORM's unit of work
    would only cost time."""
    await session.execute(_INSERT_ENTRIES, entries)


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


# Read by cursor only, newest first (`listing.cursor_query`): the trail only grows.
AUDIT_LIST = ListSpec(
    model=AuditEntry,
    sortable={"seq": AuditEntry.seq},
    default_sort="seq",
    tiebreak=AuditEntry.id,
    output_fields=frozenset(AuditEntryOut.model_fields),
)


async def page(
    session: AsyncSession, filters: AuditFilters, query: ListQuery
) -> tuple[list[AuditEntry], str | None]:
    return await fetch_next(session, AUDIT_LIST, query, conditions=filters.conditions())


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
