"""Database: engines, the declarative Base, the one-transaction-per-request session, and
`get_or_404`, the one way to load a row by its key for an endpoint.

SQLite note: every transaction that may write starts with `BEGIN IMMEDIATE` (`SQLiteWriteGate`),
so that concurrent writers queue for the write lock instead of failing with SQLITE_BUSY when a read
transaction tries to upgrade. Requests with safe methods use a second engine in autocommit, so
reads never wait for writers (WAL). Statements run on the event loop's thread
(`InlineSQLiteConnection`, docs/decisions/0017-sqlite-inline.md). On PostgreSQL both are one pool.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from functools import partial
from typing import Any, TypeVar

import aiosqlite
from sqlalchemy import DateTime, MetaData, TypeDecorator, event, text
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.orm import DeclarativeBase
from sqlalchemy.orm.interfaces import ORMOption
from sqlalchemy.pool import NullPool
from sqlalchemy.util import await_

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


# How long a SQLite writer waits for the database's write lock before failing with "database is
# locked": for another of this process's writers (`SQLiteWriteGate`), then for another process's.
SQLITE_LOCK_TIMEOUT_SECONDS = 30.0


def _sqlite_pragmas(dbapi_connection: Any, _record: Any, *, writer: bool) -> None:
    # isolation_level=None hands transaction control to `SQLiteWriteGate.begin` (writes); reads
    # run in autocommit.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    # A writer waits for the write lock in `SQLiteWriteGate`, never in SQLite's busy handler,
    # which would sleep with the event loop stopped: "locked" at once, and the gate awaits. (With
    # the write lock taken by BEGIN IMMEDIATE, nothing else a WAL transaction does waits.)
    # Readers never wait in WAL mode but in rare moments (another process recovering the WAL).
    busy_ms = 0 if writer else int(SQLITE_LOCK_TIMEOUT_SECONDS * 1000)
    cursor.execute(f"PRAGMA busy_timeout={busy_ms}")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


class InlineSQLiteConnection(aiosqlite.Connection):
    """An aiosqlite connection whose calls run on the event loop's thread instead of being handed
    to the connection's own thread and awaited: a queue, a future and a wake-up of the loop per
    call, 4 per statement, cost more than the statement (a read of a case: 20 hops, 3.2 ms of CPU
    of its 8.4). Opening and closing still go through the connection's thread, once per pooled
    connection.

    A statement now stops the event loop while it runs, as a CPU-bound handler would: fine for the
    short statements of an API (microseconds to a few milliseconds), and nothing here may wait for
    a lock with the loop stopped: readers never wait in WAL mode, and writers take the write lock
    in `SQLiteWriteGate`, which waits by awaiting."""

    async def _execute(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        if not self._running or not self._connection:
            raise ValueError("Connection closed")  # what aiosqlite raises (SQLAlchemy maps it)
        return fn(*args, **kwargs)


def _connect_inline(database: str, **kwargs: Any) -> aiosqlite.Connection:
    return InlineSQLiteConnection(partial(sqlite3.connect, database, **kwargs), iter_chunk_size=64)


def _inline_sqlite_connect(dialect: Any, _record: Any, cargs: Any, cparams: Any) -> Any:
    """`do_connect`: the dialect's own connect arguments (path, URI flags), an inline connection."""
    return dialect.dbapi.connect(*cargs, async_creator_fn=_connect_inline, **cparams)


_GATE_HELD = "sqlite_write_gate"  # on a pooled connection's record: the gate lock it holds


class SQLiteWriteGate:
    """How a SQLite write transaction begins (`BEGIN IMMEDIATE`) on inline connections, without
    ever stopping the event loop to wait for the write lock.

    - This process's writers queue on an asyncio lock (one per event loop), taken before `BEGIN
      IMMEDIATE` and released when the connection returns to the pool (after its COMMIT or
      ROLLBACK). A connection that begins again before it is returned keeps the lock it holds.
    - Another process's writer (`casefile worker`, a second `--workers` process, the CLI) is
      waited for by retrying `BEGIN IMMEDIATE` with short sleeps while SQLite answers "database is
      locked", instead of its busy handler, which would sleep with the loop stopped.

    Both waits together are bounded by `SQLITE_LOCK_TIMEOUT_SECONDS`, after which the writer fails
    with "database is locked" as SQLite's own busy timeout did."""

    def __init__(self) -> None:
        self.timeout = SQLITE_LOCK_TIMEOUT_SECONDS
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )

    def install(self, engine: AsyncEngine) -> None:
        event.listen(engine.sync_engine, "begin", self.begin)
        pool = engine.sync_engine.pool
        event.listen(pool, "checkin", lambda _dbapi_connection, record: _release(record.info))
        event.listen(pool, "invalidate", lambda _dbapi_connection, record, _error: _release(record.info))

    def _lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        lock = self._locks.get(loop)
        if lock is None:
            lock = self._locks[loop] = asyncio.Lock()
        return lock

    def begin(self, conn: Any) -> None:
        """The engine's `begin` event (runs in SQLAlchemy's greenlet: `await_` suspends it)."""
        deadline = time.monotonic() + self.timeout
        info = conn.connection.info
        if _GATE_HELD not in info:
            lock = self._lock()
            try:
                await_(asyncio.wait_for(lock.acquire(), self.timeout))
            except TimeoutError:
                raise _locked(sqlite3.OperationalError("database is locked")) from None
            info[_GATE_HELD] = lock
        cursor = conn.connection.dbapi_connection.cursor()
        try:
            delay = 0.001
            while True:
                try:
                    cursor.execute("BEGIN IMMEDIATE")
                    return
                except sqlite3.OperationalError as error:
                    left = deadline - time.monotonic()
                    if "locked" not in str(error) or left <= 0:
                        raise _locked(error) from error
                await_(asyncio.sleep(min(delay, left)))
                delay = min(delay * 2, 0.05)
        except BaseException:
            _release(info)
            raise
        finally:
            cursor.close()


def _locked(error: sqlite3.OperationalError) -> OperationalError:
    """SQLAlchemy's error, as a statement's would be (an event's own exception is not wrapped)."""
    return OperationalError("BEGIN IMMEDIATE", None, error)


def _release(info: dict[str, Any]) -> None:
    lock: asyncio.Lock | None = info.pop(_GATE_HELD, None)
    if lock is not None:
        lock.release()


# A pooled PostgreSQL connection is replaced after this long, before a server or proxy idle
# timeout ends it under us; one that died anyway fails its statement, is invalidated, and the
# statement is retried when nothing had yet run in its transaction (`RetryingSession`). This
# replaces `pool_pre_ping`, which cost three round trips (BEGIN, `;`, ROLLBACK) per checkout.
POOL_RECYCLE_SECONDS = 1800


def make_engine(settings: Settings, *, pooled: bool = True, autocommit: bool = False) -> AsyncEngine:
    url = settings.resolved_database_url
    pool: dict[str, Any]
    if not pooled:
        pool = {"poolclass": NullPool}
    elif url.startswith("sqlite") and autocommit:
        # Reads run inline (`InlineSQLiteConnection`): an idle connection's thread costs nothing,
        # and a read request holds its connection while its audit entry is committed, so the
        # pool's size is how many concurrent reads can share one audit batch.
        pool = {"pool_size": settings.pool_size, "max_overflow": 0}
    elif url.startswith("sqlite"):
        # Writers: one at a time holds the write lock (`SQLiteWriteGate`), so more connections would
        # only be checked out to wait for it.
        pool = {"pool_size": min(settings.pool_size, settings.sqlite_pool_size), "max_overflow": 0}
    else:
        # No overflow: SQLAlchemy closes an overflow connection as soon as it is returned, so under
        # a steady load above the pool's size connections were opened and closed dozens of times a
        # second (117 PostgreSQL sessions in an 8-second read benchmark at 16 connections, each
        # with its TLS attempt, its backend's start and its statements prepared again). The pool's
        # size is the process's limit; requests beyond it wait for a connection.
        pool = {"pool_size": settings.pool_size, "max_overflow": 0, "pool_recycle": POOL_RECYCLE_SECONDS}
    if url.startswith("sqlite"):
        if autocommit:
            # Reads: each statement is its own implicit transaction (WAL: it never waits for a
            # writer), so no BEGIN, COMMIT or reset-on-return ROLLBACK.
            engine = create_async_engine(url, isolation_level="AUTOCOMMIT", pool_reset_on_return=None, **pool)
            event.listen(engine.sync_engine, "do_connect", _inline_sqlite_connect)
            event.listen(engine.sync_engine, "connect", partial(_sqlite_pragmas, writer=False))
            return engine
        engine = create_async_engine(url, **pool)
        event.listen(engine.sync_engine, "do_connect", _inline_sqlite_connect)
        event.listen(engine.sync_engine, "connect", partial(_sqlite_pragmas, writer=True))
        SQLiteWriteGate().install(engine)
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


class Database:
    """The engines of one process. `session(write=...)` opens a session for one unit of work."""

    def __init__(self, settings: Settings, *, session_info: dict[str, Any] | None = None) -> None:
        self.settings = settings
        self.is_sqlite = settings.is_sqlite
        self.on_dispose: list[Callable[[], Awaitable[None]]] = []
        self.engine = make_engine(settings)
        # Reads run without a transaction (autocommit): a read request's statements need none (on
        # PostgreSQL each statement of a READ COMMITTED transaction sees its own snapshot anyway),
        # and BEGIN and COMMIT were two round trips (PostgreSQL) or hops (SQLite) of every read.
        # What a read must write goes through a write transaction of its own (audit entries),
        # except an API key's last use on PostgreSQL, one statement that commits by itself
        # (auth.service). PostgreSQL: the same pool.
        self.read_engine = (
            make_engine(settings, autocommit=True)
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
