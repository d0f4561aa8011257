"""A pooled PostgreSQL connection that died while idle (server restart, proxy timeout) costs the
next request nothing: with no `pool_pre_ping`, the first statement of a transaction that meets a
dead connection is retried on a new one (casefile.db.RetryingSession). A statement later in a
transaction is not retried (its transaction is gone), and fails. And a load above the pool's size
waits for the pool's connections instead of opening and closing new ones."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from casefile.db import Database
from tests.support.servers import make_settings

pytestmark = pytest.mark.anyio


async def _kill_backends(url: str, pids: list[int] | None = None) -> int:
    """Terminate the database's connections (those of `pids`, or all), from one of our own."""
    conn = await asyncpg.connect(url)
    try:
        killed = await conn.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid() "
            "AND ($1::int[] IS NULL OR pid = ANY($1::int[]))",
            pids,
        )
        return int(killed)
    finally:
        await conn.close()


def _engines(database: tuple[Path, str | None], **settings: Any) -> tuple[Database, str]:
    """The service's engines on the test's fresh PostgreSQL database, and its URL."""
    data_dir, url = database
    if url is None:
        pytest.skip("SQLite has no connections to lose")
    return Database(make_settings(data_dir, url, **settings)), url


@pytest.fixture
async def postgres(database: tuple[Path, str | None]) -> AsyncIterator[tuple[Database, str]]:
    db, url = _engines(database)
    try:
        yield db, url
    finally:
        await db.dispose()


async def test_first_statement_on_a_dead_connection_is_retried(postgres: tuple[Database, str]) -> None:
    db, url = postgres
    async with db.transaction() as session:
        await session.execute(text("SELECT 1"))
    # The pool's connection is idle; the server ends it (as a restart or a proxy would).
    assert await _kill_backends(url) >= 1
    async with db.transaction() as session:
        assert (await session.execute(text("SELECT 2"))).scalar_one() == 2


async def test_a_later_statement_on_a_dead_connection_fails(postgres: tuple[Database, str]) -> None:
    db, url = postgres
    with pytest.raises(DBAPIError):
        async with db.transaction() as session:
            pid = (await session.execute(text("SELECT pg_backend_pid()"))).scalar_one()
            await _kill_backends(url, [pid])
            await session.execute(text("SELECT 3"))


async def test_a_load_above_the_pool_reuses_its_connections(database: tuple[Path, str | None]) -> None:
    """More concurrent transactions than the pool holds, twice: they share the pool's connections
    (the same server backends both times), none is opened for a moment and closed again."""
    db, _url = _engines(database, db_pool_size=4)

    async def backend() -> int:
        async with db.transaction(write=False) as session:
            pid = (await session.execute(text("SELECT pg_backend_pid() FROM pg_sleep(0.05)"))).scalar_one()
            return int(pid)

    try:
        first = await asyncio.gather(*(backend() for _ in range(12)))
        second = await asyncio.gather(*(backend() for _ in range(12)))
    finally:
        await db.dispose()
    assert len(first) == len(second) == 12
    assert len(set(first)) <= 4
    assert set(second) <= set(first)
