"""SQLite statements run on the event loop's thread (casefile.db.InlineSQLiteConnection), and a
writer waits for the write lock without stopping the loop (casefile.db.SQLiteWriteGate): the
process keeps answering while another process holds the lock, this process's writers queue
instead of failing, and a writer that waits too long fails with "database is locked" and leaves
nothing held. (SQLite only: PostgreSQL's driver is asynchronous.)"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from casefile.db import Database
from casefile.db import sqlite as sqlite_gate
from tests.support.servers import make_settings

pytestmark = pytest.mark.anyio


@pytest.fixture
async def sqlite_db(tmp_path: Path) -> AsyncIterator[tuple[Database, Path]]:
    db = Database(make_settings(tmp_path, None))
    async with db.transaction() as session:
        await session.execute(text("CREATE TABLE counted (n INTEGER NOT NULL)"))
    try:
        yield db, tmp_path / "casefile.db"
    finally:
        await db.dispose()


async def test_reads_and_writes_run_on_the_event_loops_thread(sqlite_db: tuple[Database, Path]) -> None:
    db, _ = sqlite_db
    loop_thread = threading.get_ident()
    for write in (False, True):
        async with db.transaction(write=write) as session:
            raw = await (await session.connection()).get_raw_connection()
            sqlite_connection = raw.driver_connection._conn  # type: ignore[union-attr]
            sqlite_connection.create_function("thread_id", 0, threading.get_ident)
            ran_on = (await session.execute(text("SELECT thread_id()"))).scalar_one()
        assert ran_on == loop_thread, f"write={write}"


async def test_a_writer_waits_for_another_process_without_stopping_the_loop(
    sqlite_db: tuple[Database, Path],
) -> None:
    db, path = sqlite_db
    other = sqlite3.connect(path, isolation_level=None)  # another process's connection
    other.execute("BEGIN IMMEDIATE")  # holds the write lock
    other.execute("INSERT INTO counted VALUES (1)")

    async def write() -> float:
        async with db.transaction() as session:
            await session.execute(text("INSERT INTO counted VALUES (2)"))
        return time.monotonic()

    writer = asyncio.create_task(write())
    ticks = 0
    for _ in range(20):  # 0.2 s in which the writer is waiting for the lock
        await asyncio.sleep(0.01)
        ticks += 1
    assert not writer.done()
    async with db.transaction(write=False) as session:  # reads go on meanwhile
        assert (await session.execute(text("SELECT count(*) FROM counted"))).scalar_one() == 0
    released_at = time.monotonic()
    other.execute("COMMIT")
    other.close()
    finished_at = await asyncio.wait_for(writer, 5)
    assert ticks == 20
    assert finished_at >= released_at
    async with db.transaction(write=False) as session:
        rows = (await session.execute(text("SELECT n FROM counted ORDER BY n"))).scalars().all()
    assert rows == [1, 2]


async def test_this_processes_writers_queue_instead_of_failing(sqlite_db: tuple[Database, Path]) -> None:
    db, _ = sqlite_db

    async def write(n: int) -> None:
        async with db.transaction() as session:
            await session.execute(text("INSERT INTO counted VALUES (:n)"), {"n": n})
            await asyncio.sleep(0.005)  # the transaction stays open while others start theirs
            await session.execute(text("UPDATE counted SET n = n WHERE n = :n"), {"n": n})

    await asyncio.gather(*(write(n) for n in range(30)))
    async with db.transaction(write=False) as session:
        rows = (await session.execute(text("SELECT n FROM counted ORDER BY n"))).scalars().all()
    assert rows == list(range(30))


async def test_a_writer_that_waits_too_long_fails_and_holds_nothing(
    sqlite_db: tuple[Database, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_gate, "SQLITE_LOCK_TIMEOUT_SECONDS", 0.3)
    db = Database(sqlite_db[0].settings)  # engines made with the short timeout
    path = sqlite_db[1]
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        started = time.monotonic()
        with pytest.raises(OperationalError, match="database is locked"):
            async with db.transaction() as session:
                await session.execute(text("INSERT INTO counted VALUES (1)"))
        assert 0.3 <= time.monotonic() - started < 3  # the whole timeout, not less
    finally:
        other.execute("ROLLBACK")
        other.close()
    try:
        # The failed writer released this process's queue: the next one goes through.
        async with db.transaction() as session:
            await session.execute(text("INSERT INTO counted VALUES (3)"))
        async with db.transaction(write=False) as session:
            assert (await session.execute(text("SELECT n FROM counted"))).scalars().all() == [3]
    finally:
        await db.dispose()
