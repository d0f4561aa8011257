"""A migrated database of its own for each audit test (tampering with one log must not leak into
another test's), and the steps the tests take on it: write entries, run the sequencer until
everything is placed, verify."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from casefile.audit.sequencer import Sequencer
from casefile.audit.service import record_apart
from casefile.audit.verification import Verification, verify
from casefile.db import Database
from casefile.migrate import upgrade
from casefile.settings import Settings
from tests.support.servers import make_settings, run_sql


@pytest.fixture
def trail_settings(database: tuple[Path, str | None]) -> Iterator[Settings]:
    data_dir, url = database
    settings = make_settings(data_dir, url)
    upgrade(settings)
    yield settings


def fill(settings: Settings, count: int, prefix: str = "case") -> None:
    """`count` read entries, one transaction each."""

    async def write() -> None:
        db = Database(settings)
        try:
            for n in range(count):
                await record_apart(
                    db,
                    "case.read",
                    resource_type="case",
                    resource_id=f"{prefix}_{n}",
                    case_id=f"{prefix}_{n}",
                )
        finally:
            await db.dispose()

    asyncio.run(write())


async def sequence_all(db: Database, settings: Settings) -> Sequencer:
    """A sequencer that leads and places everything committed so far (one batch per step)."""
    sequencer = Sequencer(db, settings)
    await sequencer._lead()
    assert sequencer.token is not None
    while await sequencer.step():
        pass
    return sequencer


def sequence(settings: Settings) -> None:
    async def run() -> None:
        db = Database(settings)
        try:
            sequencer = await sequence_all(db, settings)
            async with db.transaction(write=True) as session:
                from casefile.audit import log_repository

                assert sequencer.token is not None
                await log_repository.release_lease(session, sequencer.token)
        finally:
            await db.dispose()

    asyncio.run(run())


def check(settings: Settings, kept: list[dict[str, Any]] | None = None) -> Verification:
    async def run() -> Verification:
        db = Database(settings)
        try:
            async with db.transaction(write=False) as session:
                return await verify(session, kept)
        finally:
            await db.dispose()

    return asyncio.run(run())


async def query(db: Database, statement: str) -> list[Any]:
    """SQL from inside a test's own event loop (`run_sql` starts one)."""
    async with db.transaction(write=False) as session:
        return list((await session.execute(text(statement))).all())


async def until_none_waits(db: Database, at_least: int = 0) -> None:
    """Until every committed entry is placed (and at least `at_least` are): the database is the
    only place that says so, so it is asked every 50 ms."""
    async with asyncio.timeout(30):
        while True:
            waiting = await query(db, "SELECT id FROM audit_entries WHERE seq IS NULL")
            if (
                not waiting
                and len(await query(db, "SELECT id FROM audit_entries WHERE seq IS NOT NULL")) >= at_least
            ):
                return
            await asyncio.sleep(0.05)


def entries(settings: Settings) -> list[Any]:
    return run_sql(settings, "SELECT id, seq, prev_hash, hash FROM audit_entries ORDER BY seq, id")
