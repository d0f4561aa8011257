"""Database: engines, the declarative Base, and the one-transaction-per-request session.

SQLite note: every transaction that may write starts with `BEGIN IMMEDIATE`, so that concurrent
requests queue for the write lock (busy_timeout) instead of failing with SQLITE_BUSY when a read
transaction tries to upgrade. Requests with safe methods use a second engine with plain deferred
transactions, so reads never wait for writers (WAL). On PostgreSQL both are the same engine.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime, MetaData, TypeDecorator, event
from sqlalchemy.engine import Dialect
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.orm import DeclarativeBase
from sqlalchemy.pool import NullPool

from casefile.settings import Settings

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


def make_engine(settings: Settings, *, immediate: bool, pooled: bool = True) -> AsyncEngine:
    url = settings.resolved_database_url
    pool: dict[str, Any] = (
        {"pool_size": settings.db_pool_size, "max_overflow": 0 if url.startswith("sqlite") else 10}
        if pooled
        else {"poolclass": NullPool}
    )
    if url.startswith("sqlite"):
        engine = create_async_engine(url, **pool)
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        begin_sql = "BEGIN IMMEDIATE" if immediate else "BEGIN"

        @event.listens_for(engine.sync_engine, "begin")
        def _begin(conn: Any) -> None:
            conn.exec_driver_sql(begin_sql)

        return engine
    return create_async_engine(url, pool_pre_ping=True, **pool)


class Database:
    """The engines of one process. `session(write=...)` opens a session for one unit of work."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.is_sqlite = settings.is_sqlite
        self.engine = make_engine(settings, immediate=True)
        self.read_engine = make_engine(settings, immediate=False) if self.is_sqlite else self.engine
        self._writer = async_sessionmaker(self.engine, expire_on_commit=False)
        self._reader = async_sessionmaker(self.read_engine, expire_on_commit=False)

    def session(self, *, write: bool = True) -> AsyncSession:
        return (self._writer if write else self._reader)()

    @asynccontextmanager
    async def transaction(self, *, write: bool = True) -> AsyncIterator[AsyncSession]:
        """One transaction: commit when the block ends normally, roll back on any exception."""
        async with self.session(write=write) as session, session.begin():
            yield session

    async def dispose(self) -> None:
        await self.engine.dispose()
        if self.read_engine is not self.engine:
            await self.read_engine.dispose()
