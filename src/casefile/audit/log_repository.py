"""The log's queries: entries waiting for a position, the tree's nodes, signed heads, signing keys,
and the sequencer's state row with its lease. Only the sequencer writes these tables."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import Table, bindparam, case, insert, or_, select, tuple_, update
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.audit.merkle import EMPTY_ROOT, NodeKey
from casefile.db import dialect_insert
from casefile.models import (
    PREVIOUS_RELEASE_SEQ_BASE,
    AuditEntry,
    AuditLogState,
    AuditSigningKey,
    AuditTreeHead,
    AuditTreeNode,
)

STATE_ID = 1
_NODES = cast(Table, AuditTreeNode.__table__)
_ENTRIES = cast(Table, AuditEntry.__table__)
_INSERT_NODES = insert(_NODES)
_INSERT_HEAD = insert(cast(Table, AuditTreeHead.__table__))
# Statements built once (the sequencer runs them every few hundred milliseconds). Waiting for a
# position: no `seq` yet, or the old chain's (a previous release's process wrote the entry during
# a rolling upgrade: `models.audit.PREVIOUS_RELEASE_SEQ_BASE`).
_WAITING = or_(_ENTRIES.c.seq.is_(None), _ENTRIES.c.seq >= PREVIOUS_RELEASE_SEQ_BASE)
_UNPLACED = (
    select(_ENTRIES.c.id, _ENTRIES.c.hash).where(_WAITING).order_by(_ENTRIES.c.id).limit(bindparam("limit"))
)
_CHAINED = _ENTRIES.c.seq >= PREVIOUS_RELEASE_SEQ_BASE
# The right-hand sides read the row as it was: an old chain's position and link are kept.
_PLACE = (
    update(_ENTRIES)
    .where(_ENTRIES.c.id == bindparam("entry_id"), _WAITING)
    .values(
        seq=bindparam("new_seq"),
        prev_hash=bindparam("new_prev_hash"),
        chained_seq=case((_CHAINED, _ENTRIES.c.seq), else_=None),
        chained_prev_hash=case((_CHAINED, _ENTRIES.c.prev_hash), else_=None),
    )
)


async def unplaced(session: AsyncSession, limit: int) -> list[tuple[str, str]]:
    """Committed entries that have no position yet (id and hash), oldest id first."""
    rows = (await session.execute(_UNPLACED, {"limit": limit})).all()
    return [(row[0], row[1]) for row in rows]


async def place(session: AsyncSession, placed: list[dict[str, Any]]) -> None:
    """Give entries their position and link (`entry_id`, `new_seq`, `new_prev_hash`), each only if
    it had none. Only the lease's holder runs this, under the state row's lock; the unique indexes
    on `seq` and `prev_hash` refuse a second placement at the same position whatever happens."""
    await (await session.connection()).execute(_PLACE, placed)


async def add_nodes(session: AsyncSession, nodes: list[tuple[NodeKey, bytes]]) -> None:
    if nodes:
        rows = [{"level": level, "node_index": index, "hash": value} for (level, index), value in nodes]
        await session.execute(_INSERT_NODES, rows)


async def nodes(session: AsyncSession, keys: Iterable[NodeKey]) -> dict[NodeKey, bytes]:
    wanted = sorted(set(keys))
    found: dict[NodeKey, bytes] = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        rows = await session.execute(
            select(AuditTreeNode.level, AuditTreeNode.node_index, AuditTreeNode.hash).where(
                tuple_(AuditTreeNode.level, AuditTreeNode.node_index).in_(chunk)
            )
        )
        found.update({(row[0], row[1]): bytes(row[2]) for row in rows})
    return found


async def leaf_hashes(session: AsyncSession, start: int, end: int) -> dict[int, bytes]:
    """Stored leaf hashes of positions `start` to `end - 1` (0-based), by position."""
    rows = await session.execute(
        select(AuditTreeNode.node_index, AuditTreeNode.hash).where(
            AuditTreeNode.level == 0, AuditTreeNode.node_index >= start, AuditTreeNode.node_index < end
        )
    )
    return {row[0]: bytes(row[1]) for row in rows}


# --- heads and keys -----------------------------------------------------------------------------


async def add_head(session: AsyncSession, head: dict[str, Any]) -> None:
    await session.execute(_INSERT_HEAD, [head])


async def latest_head(session: AsyncSession) -> AuditTreeHead | None:
    found: AuditTreeHead | None = await session.scalar(
        select(AuditTreeHead).order_by(AuditTreeHead.tree_size.desc()).limit(1)
    )
    return found


async def head_of_size(session: AsyncSession, tree_size: int) -> AuditTreeHead | None:
    return await session.get(AuditTreeHead, tree_size)


async def heads(
    session: AsyncSession, *, after_size: int = 0, limit: int | None = None
) -> list[AuditTreeHead]:
    statement = (
        select(AuditTreeHead).where(AuditTreeHead.tree_size > after_size).order_by(AuditTreeHead.tree_size)
    )
    if limit is not None:
        statement = statement.limit(limit)
    return list((await session.scalars(statement)).all())


async def keys(session: AsyncSession) -> list[AuditSigningKey]:
    return list((await session.scalars(select(AuditSigningKey).order_by(AuditSigningKey.added_at))).all())


async def register_key(session: AsyncSession, key_id: str, public_key: str, now: datetime) -> None:
    """Record a signing key's public half, once (a rotation adds the new key and keeps the old)."""
    statement = dialect_insert(session)(AuditSigningKey).values(
        key_id=key_id, public_key=public_key, added_at=now
    )
    await session.execute(statement.on_conflict_do_nothing(index_elements=["key_id"]))


# --- the sequencer's state and lease ------------------------------------------------------------


async def state(session: AsyncSession, *, lock: bool = False) -> AuditLogState:
    """The state row. A writer (`lock`) makes it if a schema was built without the migration; a
    reader gets an empty log's state then."""
    statement = select(AuditLogState).where(AuditLogState.id == STATE_ID)
    if lock:  # PostgreSQL: FOR UPDATE; SQLite's writer already holds the write lock
        statement = statement.with_for_update()
    found: AuditLogState | None = await session.scalar(statement.execution_options(populate_existing=True))
    if found is None:
        found = AuditLogState(
            id=STATE_ID, tree_size=0, root_hash=EMPTY_ROOT.hex(), legacy_size=0, lease_token=0
        )
        if lock:
            session.add(found)
            await session.flush()
    return found


async def take_lease(session: AsyncSession, holder: str, now: datetime, seconds: float) -> int | None:
    """Take the sequencer's lease if nobody holds it (or its holder's ran out); the new fencing
    token, or None."""
    await state(session, lock=True)  # exists
    result = await session.execute(
        update(AuditLogState)
        .where(
            AuditLogState.id == STATE_ID,
            or_(AuditLogState.lease_expires_at.is_(None), AuditLogState.lease_expires_at < now),
        )
        .values(
            lease_holder=holder,
            lease_token=AuditLogState.lease_token + 1,
            lease_expires_at=now + timedelta(seconds=seconds),
        )
        .returning(AuditLogState.lease_token)
        .execution_options(synchronize_session=False)
    )
    token = result.scalar_one_or_none()
    return None if token is None else int(token)


async def renew_lease(session: AsyncSession, token: int, now: datetime, seconds: float) -> bool:
    result = await session.execute(
        update(AuditLogState)
        .where(AuditLogState.id == STATE_ID, AuditLogState.lease_token == token)
        .values(lease_expires_at=now + timedelta(seconds=seconds))
        .execution_options(synchronize_session=False)
    )
    return bool(cast(Any, result).rowcount)


async def release_lease(session: AsyncSession, token: int) -> None:
    await session.execute(
        update(AuditLogState)
        .where(AuditLogState.id == STATE_ID, AuditLogState.lease_token == token)
        .values(lease_expires_at=None, lease_holder=None)
        .execution_options(synchronize_session=False)
    )
