"""SQLite on the event loop: statements run on the loop's thread (`InlineSQLiteConnection`,
docs/decisions/0017-sqlite-inline.md), and every transaction that may write begins with `BEGIN
IMMEDIATE` (`SQLiteWriteGate`), so that concurrent writers queue for the write lock instead of
failing with SQLITE_BUSY when a read transaction tries to upgrade. Reads use a second engine in
autocommit, so they never wait for writers (WAL)."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
import weakref
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

import aiosqlite
from sqlalchemy import event
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.util import await_

T = TypeVar("T")
log = logging.getLogger(__name__)


# How long a SQLite writer waits for the database's write lock before failing with "database is
# locked": for another of this process's writers (`SQLiteWriteGate`), then for another process's.
SQLITE_LOCK_TIMEOUT_SECONDS = 30.0


def sqlite_pragmas(dbapi_connection: Any, _record: Any, *, writer: bool) -> None:
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


def inline_sqlite_connect(dialect: Any, _record: Any, cargs: Any, cparams: Any) -> Any:
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
