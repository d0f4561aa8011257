"""Audit entry queries: the INSERT of requests' entries, filtered pages, and the log in order."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import ColumnElement, Table, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from casefile.audit.schemas import AuditEntryOut
from casefile.listing import ListQuery, ListSpec, fetch_next
from casefile.models import AuditEntry

READ_BATCH = 1000
_ENTRIES = cast(Table, AuditEntry.__table__)
# Built once: building a statement cost more CPU than running it (every read inserts an entry),
# and the same object keeps its compiled form's cache key between executions.
_INSERT_ENTRIES = insert(_ENTRIES)


async def insert_entries(session: AsyncSession | AsyncConnection, entries: list[dict[str, Any]]) -> None:
    """Insert entries (with their content hash; no position yet). A Core statement, one for all
    the entries: they are never read back, so the ORM's unit of work would only cost time. It
    reads and locks nothing: concurrent requests insert side by side."""
    await session.execute(_INSERT_ENTRIES, entries)


@dataclass(frozen=True)
class AuditFilters:
    actor_id: str | None = None
    case_id: str | None = None
    action: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    # What the reader may see of the trail, if not all of it (an administrator behind walls:
    # casefile.admin); a condition on `audit_entries`.
    readable: ColumnElement[bool] | None = None

    def conditions(self) -> list[ColumnElement[bool]]:
        where: list[ColumnElement[bool]] = [] if self.readable is None else [self.readable]
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


# Read by cursor only, newest first (`listing.cursor_query`): the trail only grows. By id (a ULID:
# the order entries were made in, each process's ids increasing), not by position: an entry is
# listed the moment it commits, before the sequencer places it, and a page never shifts.
AUDIT_LIST = ListSpec(
    model=AuditEntry,
    sortable={"id": AuditEntry.id},
    default_sort="id",
    tiebreak=AuditEntry.id,
    output_fields=frozenset(AuditEntryOut.model_fields),
)


async def page(
    session: AsyncSession, filters: AuditFilters, query: ListQuery
) -> tuple[list[AuditEntry], str | None]:
    return await fetch_next(session, AUDIT_LIST, query, conditions=filters.conditions())


async def log_batches(
    session: AsyncSession, *, up_to: int, after: int = 0, filters: AuditFilters | None = None
) -> AsyncIterator[list[AuditEntry]]:
    """The placed entries after position `after` up to `up_to` (matching `filters`), in log
    order, in batches (a log of any length in constant memory)."""
    conditions = filters.conditions() if filters else []
    while True:
        batch = list(
            (
                await session.scalars(
                    select(AuditEntry)
                    .where(AuditEntry.seq > after, AuditEntry.seq <= up_to, *conditions)
                    .order_by(AuditEntry.seq)
                    .limit(READ_BATCH)
                )
            ).all()
        )
        if batch:
            yield batch
        if len(batch) < READ_BATCH:
            return
        after = cast(int, batch[-1].seq)
        session.expunge_all()


async def placed_beyond(session: AsyncSession, size: int) -> AuditEntry | None:
    """The first entry placed after position `size` (none should be: every placed entry is
    covered by a signed head)."""
    found: AuditEntry | None = await session.scalar(
        select(AuditEntry).where(AuditEntry.seq > size).order_by(AuditEntry.seq).limit(1)
    )
    return found
