"""Database: engines, the declarative Base, the one-transaction-per-request session, and
`get_or_404`, the one way to load a row by its key for an endpoint.

SQLite note: every transaction that may write starts with `BEGIN IMMEDIATE`, so that concurrent
requests queue for the write lock (busy_timeout) instead of failing with SQLITE_BUSY when a read
transaction tries to upgrade. Requests with safe methods use a second engine with plain deferred
transactions, so reads never wait for writers (WAL). On PostgreSQL both are the same engine.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any, TypeVar

from sqlalchemy import DateTime, MetaData, TypeDecorator, event, text
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.orm import DeclarativeBase
from sqlalchemy.orm.interfaces import ORMOption
from sqlalchemy.pool import NullPool

from casefile.errors import NotFound
from casefile.settings import Settings

T = TypeVar("T")
log = logging.getLogger(__name__)

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class UTCDateTime(TypeDecorator[datetime]):
    """Stores naive UTC, returns aware UTC: identical behaviour on SQLite (no time zones) and PostgreSQL."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return None if value is None else value.replace(tzinfo=UTC)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # isolation_level=None hands transaction control to the "begin" listeners below.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


# A pooled PostgreSQL connection is replaced after this long, before a server or proxy idle
# timeout ends it under us; one that died anyway fails its statement, is invalidated, and the
# statement is retried when nothing had yet run in its transaction (`RetryingSession`). This
# replaces `pool_pre_ping`, which cost three round trips (BEGIN, `;`, ROLLBACK) per checkout.
POOL_RECYCLE_SECONDS = 1800


def make_engine(
    settings: Settings, *, immediate: bool, pooled: bool = True, autocommit: bool = False
) -> AsyncEngine:
    url = settings.resolved_database_url
    pool: dict[str, Any]
    if not pooled:
        pool = {"poolclass": NullPool}
    elif url.startswith("sqlite"):
        # Each aiosqlite connection is a thread; more than a few only compete for the interpreter
        # lock (SQLite serialises writers anyway, and a read is short), so requests queue for a
        # connection in the event loop instead.
        pool = {"pool_size": min(settings.db_pool_size, settings.sqlite_pool_size), "max_overflow": 0}
    else:
        pool = {"pool_size": settings.db_pool_size, "max_overflow": 10, "pool_recycle": POOL_RECYCLE_SECONDS}
    if url.startswith("sqlite"):
        if autocommit:
            # Reads: each statement is its own implicit transaction (WAL: it never waits for a
            # writer), so no BEGIN, COMMIT or reset-on-return ROLLBACK, each a thread hop.
            engine = create_async_engine(url, isolation_level="AUTOCOMMIT", pool_reset_on_return=None, **pool)
            event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
            return engine
        engine = create_async_engine(url, **pool)
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        begin_sql = "BEGIN IMMEDIATE" if immediate else "BEGIN"

        @event.listens_for(engine.sync_engine, "begin")
        def _begin(conn: Any) -> None:
            conn.exec_driver_sql(begin_sql)

        return engine
    # Prepared statements are cached per connection, and after five runs PostgreSQL may switch
    # to a generic plan that does not know the search words: it then reads every match to return
    # 20 rows (measured: 2.4 s instead of 0.2 ms on 1M cases). Custom plans every time, and no JIT
    # for these short queries (its compilation cost more than it saved).
    server_settings = {"plan_cache_mode": "force_custom_plan", "jit": "off"}
    return create_async_engine(url, connect_args={"server_settings": server_settings}, **pool)


class RetryingSession(AsyncSession):
    """A session whose first statement of a transaction is retried once on a fresh connection
    when it met a dead one (the server restarted, a proxy dropped an idle connection): nothing
    had run in that transaction, so running it again is the same as running it the first time.
    A later statement is not retried (the transaction's earlier work is gone with the
    connection); it fails as before. SQLAlchemy invalidates the dead connection (and the pool's
    older ones) itself, its "optimistic" disconnect handling."""

    async def _retry(self, call: Callable[[], Awaitable[T]]) -> T:
        fresh = not self.in_transaction()
        try:
            return await call()
        except DBAPIError as error:
            if not (fresh and error.connection_invalidated):
                raise
            log.warning("database connection was dead; retrying the statement on a new one")
            await self.rollback()
            return await call()

    async def execute(self, *args: Any, **kwargs: Any) -> Any:
        return await self._retry(lambda: super(RetryingSession, self).execute(*args, **kwargs))

    async def scalar(self, *args: Any, **kwargs: Any) -> Any:
        return await self._retry(lambda: super(RetryingSession, self).scalar(*args, **kwargs))

    async def scalars(self, *args: Any, **kwargs: Any) -> Any:
        return await self._retry(lambda: super(RetryingSession, self).scalars(*args, **kwargs))

    async def get(self, *args: Any, **kwargs: Any) -> Any:
        return await self._retry(lambda: super(RetryingSession, self).get(*args, **kwargs))


AfterCommit = Callable[[], Awaitable[None]]
BeforeCommit = Callable[[AsyncSession], Awaitable[None]]
_TRANSACTION_STATE = "transaction_state"
# The keys of auth.principal_cache (not imported: db is below auth).
PRINCIPAL_CACHE = "principal_cache"
PRINCIPALS_CHANGED = "principals_changed"


def transaction_state(session: AsyncSession) -> dict[str, Any]:
    """Scratch space that lives until the session's current transaction ends (see `finish`)."""
    state: dict[str, Any] = session.info.setdefault(_TRANSACTION_STATE, {})
    return state


def after_commit(session: AsyncSession, action: AfterCommit) -> None:
    """Run `action` once the session's transaction has committed (never if it rolls back).
    For work outside the database that must not happen unless the change is durable, such as
    removing a file that no committed row refers to any more."""
    transaction_state(session).setdefault("after_commit", []).append(action)


def before_commit(session: AsyncSession, action: BeforeCommit, *, first: bool = False) -> None:
    """Run `action` in the session's transaction just before it commits (never if it rolls back;
    if the action fails, the transaction rolls back). For work that must be the transaction's last,
    such as appending to the audit chain: the chain's lock is then the last one the transaction
    takes and is held only for the commit. `first`: run it before the actions registered without
    `first` (the outbox's rows, which must not be written under the chain's lock)."""
    actions = transaction_state(session).setdefault("before_commit", [])
    if first:
        actions.insert(0, action)
    else:
        actions.append(action)


async def finish(session: AsyncSession, *, commit: bool) -> None:
    """End the session's transaction: run the before-commit actions and commit, then run the
    after-commit actions; or roll back."""
    if commit:
        try:
            # While the state still exists: an action reads it (the audit entries to append).
            for before in transaction_state(session).get("before_commit", []):
                await before(session)
        except BaseException:
            session.info.pop(_TRANSACTION_STATE, None)
            await session.rollback()
            raise
    state: dict[str, Any] = session.info.pop(_TRANSACTION_STATE, {})
    if not commit:
        session.info.pop(PRINCIPALS_CHANGED, None)
        await session.rollback()
        return
    await session.commit()
    # Set by a flush or statement that changed who a caller is or what it may reach (the commit
    # flushes too): cached callers are dropped before the response of this request is sent.
    if session.info.pop(PRINCIPALS_CHANGED, False):
        await session.info[PRINCIPAL_CACHE].invalidate()
    for action in state.get("after_commit", []):
        try:
            await action()
        except Exception:
            # The change is committed; a failed follow-up is logged and left for the next sweep.
            log.exception("after-commit action failed")


async def commit_early(session: AsyncSession) -> None:
    """Commit the request's transaction before the handler's slow part (an upload's body, a test
    delivery's HTTP call), so no transaction or connection is held across it."""
    await finish(session, commit=True)


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


def is_write_session(session: AsyncSession) -> bool:
    """Whether the session's transaction may write: a request with an unsafe method sets
    `info["write"]` (see `auth.dependencies.get_session`); any other session is a writer's."""
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


class Database:
    """The engines of one process. `session(write=...)` opens a session for one unit of work."""

    def __init__(self, settings: Settings, *, session_info: dict[str, Any] | None = None) -> None:
        self.settings = settings
        self.is_sqlite = settings.is_sqlite
        self.on_dispose: list[Callable[[], Awaitable[None]]] = []
        self.engine = make_engine(settings, immediate=True)
        # Reads run without a transaction (autocommit): a read request's statements need none (on
        # PostgreSQL each statement of a READ COMMITTED transaction sees its own snapshot anyway),
        # and BEGIN and COMMIT were two round trips (PostgreSQL) or hops (SQLite) of every read.
        # What a read must write goes through a write transaction of its own (audit entries),
        # except an API key's last use on PostgreSQL, one statement that commits by itself
        # (auth.service). PostgreSQL: the same pool.
        self.read_engine = (
            make_engine(settings, immediate=False, autocommit=True)
            if self.is_sqlite
            else self.engine.execution_options(isolation_level="AUTOCOMMIT")
        )
        # `session_info` reaches every session (e.g. the worker's wake-up, used by `emit`).
        info = session_info or {}
        self._writer = async_sessionmaker(
            self.engine, class_=RetryingSession, expire_on_commit=False, info=info
        )
        self._reader = async_sessionmaker(
            self.read_engine, class_=RetryingSession, expire_on_commit=False, info=info
        )

    def session(self, *, write: bool = True) -> AsyncSession:
        return (self._writer if write else self._reader)()

    @asynccontextmanager
    async def transaction(self, *, write: bool = True) -> AsyncIterator[AsyncSession]:
        """One transaction: commit when the block ends normally, roll back on any exception."""
        async with self.session(write=write) as session:
            try:
                yield session
            except BaseException:
                await finish(session, commit=False)
                raise
            await finish(session, commit=True)

    async def dispose(self) -> None:
        # What was built on this database and must end before its engines (the audit's appender).
        for close in self.on_dispose:
            await close()
        await self.engine.dispose()
        if self.read_engine is not self.engine:
            await self.read_engine.dispose()
