"""The engines of a process (`make_engine`: pools per database), the session class that retries
a first statement on a dead connection, and `Database`, which opens sessions and transactions."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, TypeVar

from sqlalchemy import event, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.pool import NullPool

from casefile.db.sqlite import SQLiteWriteGate, inline_sqlite_connect, sqlite_pragmas
from casefile.db.transactions import finish
from casefile.settings import Settings

T = TypeVar("T")
log = logging.getLogger(__name__)


# A pooled PostgreSQL connection is replaced after this long, before a server or proxy idle
# timeout ends it under us; one that died anyway fails its statement, is invalidated, and the
# statement is retried when nothing had yet run in its transaction (`RetryingSession`). This
# replaces `pool_pre_ping`, which cost three round trips (BEGIN, `;`, ROLLBACK) per checkout.
POOL_RECYCLE_SECONDS = 1800

# The first key of `Database.held_lock`'s two-key advisory locks ("CFLK"): PostgreSQL keeps the
# two-key space apart from the one-key locks of `lock_for_transaction` and migrations.
HELD_LOCK_SPACE = 0x43464C4B


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
            event.listen(engine.sync_engine, "do_connect", inline_sqlite_connect)
            event.listen(engine.sync_engine, "connect", partial(sqlite_pragmas, writer=False))
            return engine
        engine = create_async_engine(url, **pool)
        event.listen(engine.sync_engine, "do_connect", inline_sqlite_connect)
        event.listen(engine.sync_engine, "connect", partial(sqlite_pragmas, writer=True))
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


_DATABASE = "database"


def database_of(session: AsyncSession) -> Database:
    """The `Database` whose engine `session` came from: for work that must commit apart from the
    session's own transaction (a read's audit entry)."""
    database: Database = session.info[_DATABASE]
    return database


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
        # `session_info` reaches every session (e.g. the worker's wake-up, used by `emit`), and
        # so does the database itself (`database_of`).
        info = {**(session_info or {}), _DATABASE: self}
        self._writer = async_sessionmaker(
            self.engine, class_=RetryingSession, expire_on_commit=False, info=info
        )
        self._reader = async_sessionmaker(
            self.read_engine, class_=RetryingSession, expire_on_commit=False, info=info
        )
        self._lock_engine: AsyncEngine | None = None

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

    @asynccontextmanager
    async def held_lock(self, name: str) -> AsyncIterator[None]:
        """Hold the lock called `name` across several transactions of this and every other process
        (a conditional write's check and its write). PostgreSQL: a session-level advisory lock on
        a connection of a small pool of its own, so that waiting for the lock never holds a
        connection the holder's own work needs; a process that dies releases it with its
        connection. SQLite: one process serves the database, and the caller's in-process lock is
        enough."""
        if self.is_sqlite:
            yield
            return
        if self._lock_engine is None:
            self._lock_engine = create_async_engine(
                self.settings.resolved_database_url,
                isolation_level="AUTOCOMMIT",
                pool_size=max(2, self.settings.pool_size // 4),
                max_overflow=0,
                pool_recycle=POOL_RECYCLE_SECONDS,
            )
        key = {"space": HELD_LOCK_SPACE, "name": name}
        async with self._lock_engine.connect() as connection:
            try:
                await connection.execute(text("SELECT pg_advisory_lock(:space, hashtext(:name))"), key)
                yield
            finally:
                # Also after a cancelled wait, which may have been granted the lock as it ended. A
                # connection that cannot say so is closed: its lock ends with it.
                try:
                    await connection.execute(text("SELECT pg_advisory_unlock_all()"))
                except BaseException:
                    await connection.invalidate()
                    raise

    async def dispose(self) -> None:
        # What was built on this database and must end before its engines (the audit's appender).
        for close in self.on_dispose:
            await close()
        if self._lock_engine is not None:
            await self._lock_engine.dispose()
        await self.engine.dispose()
        if self.read_engine is not self.engine:
            await self.read_engine.dispose()
