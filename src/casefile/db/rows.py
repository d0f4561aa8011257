"""`get_or_404`, the one way to load a row by its key for an endpoint (with the row lock every
state change takes), and the few statements that differ between SQLite and PostgreSQL."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy import text
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm.interfaces import ORMOption

from casefile.db.base import Base
from casefile.errors import ErrorDetail, NotFound

T = TypeVar("T")
log = logging.getLogger(__name__)


ModelT = TypeVar("ModelT", bound=Base)


async def get_or_404(
    session: AsyncSession, model: type[ModelT], key: str, message: str, *options: ORMOption
) -> ModelT:
    """The `model` row with primary key `key`, read in `session`'s transaction (with loader
    `options`, e.g. `selectinload(...)`), or 404 NOT_FOUND with `message`.

    The one locking rule for every state change: in a transaction that may write, the row is read
    with a lock held until the transaction ends, so that whatever the change checks (a status
    move, that the row still exists, an assignee already there) is the latest committed state, and
    a concurrent change of the same row waits for this one and then sees it (or finds the row gone:
    404). On PostgreSQL that is `SELECT … FOR UPDATE`, re-reading the row even if the session
    already holds it; SQLite ignores the clause, its writers being serialised by `BEGIN IMMEDIATE`."""
    lock = is_write_session(session)
    row = await session.get(
        model, key, options=options, with_for_update=True if lock else None, populate_existing=lock
    )
    if row is None:
        raise NotFound(message)
    return row


async def referenced(
    session: AsyncSession, model: type[ModelT], key: str, field: str, message: str
) -> ModelT:
    """The row a request body names in `field` (a rate's user, a party's contact), read with the
    lock of `get_or_404`, or 404 naming the field (docs/api-conventions.md#references)."""
    try:
        return await get_or_404(session, model, key, message)
    except NotFound:
        raise NotFound.referenced([ErrorDetail(field, message)]) from None


def is_write_session(session: AsyncSession) -> bool:
    """Whether the session's transaction may write: a request with an unsafe method sets
    `info["write"]` (see `request_scope.get_session`); any other session is a writer's."""
    return bool(session.info.get("write", True))


async def lock_for_transaction(session: AsyncSession, name: str) -> None:
    """Hold the lock called `name` until the session's transaction ends, for a rule over several
    rows that no single row lock covers (e.g. "at least one active administrator"): a second
    transaction taking it waits, then reads what the first committed. PostgreSQL: a transaction-
    scoped advisory lock. SQLite: nothing to do, a writing transaction holds the database's write
    lock from its `BEGIN IMMEDIATE`."""
    if dialect_name(session) == "postgresql":
        await session.execute(text("SELECT pg_advisory_xact_lock(hashtext(:name))"), {"name": name})


def dialect_name(session: AsyncSession) -> str:
    return session.get_bind().dialect.name


def dialect_insert(session: AsyncSession) -> Callable[..., Any]:
    """The dialect's INSERT construct, for upserts (`on_conflict_do_update`)."""
    return pg_insert if dialect_name(session) == "postgresql" else sqlite_insert
