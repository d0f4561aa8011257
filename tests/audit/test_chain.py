"""The hash chain on a real database: what `verify` finds after history is changed directly in
the database, and that concurrent writers never fork the chain (SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from casefile.audit.chain import GENESIS_HASH, canonical_json, entry_hash
from casefile.audit.service import Verification, record, record_apart, verify
from casefile.db import Database
from casefile.request_context import RequestContext, request_context
from casefile.settings import Settings
from tests.support.servers import run_sql


async def _write(settings: Settings, count: int) -> None:
    db = Database(settings)
    try:
        for n in range(count):
            await record_apart(
                db, "case.read", resource_type="case", resource_id=f"case_{n}", case_id=f"case_{n}"
            )
    finally:
        await db.dispose()


async def _verify(settings: Settings) -> Verification:
    db = Database(settings)
    try:
        async with db.transaction(write=False) as session:
            return await verify(session)
    finally:
        await db.dispose()


def entries(settings: Settings) -> list[Any]:
    return run_sql(settings, "SELECT id, seq, prev_hash, hash FROM audit_entries ORDER BY seq")


def test_an_untouched_chain_verifies(trail_settings: Settings) -> None:
    asyncio.run(_write(trail_settings, 5))
    rows = entries(trail_settings)
    assert [r.seq for r in rows] == [1, 2, 3, 4, 5]
    assert rows[0].prev_hash == GENESIS_HASH
    assert all(later.prev_hash == earlier.hash for earlier, later in itertools.pairwise(rows))
    result = asyncio.run(_verify(trail_settings))
    assert result.broken is None and result.checked == 5


def test_an_edited_entry_is_named(trail_settings: Settings) -> None:
    asyncio.run(_write(trail_settings, 5))
    third = entries(trail_settings)[2]
    run_sql(trail_settings, "UPDATE audit_entries SET resource_id = 'case_other' WHERE id = :id", id=third.id)
    result = asyncio.run(_verify(trail_settings))
    assert result.broken is not None and result.broken.entry_id == third.id
    assert "edited" in result.broken.reason and result.checked == 2


def test_an_edit_that_also_recomputes_the_hash_breaks_the_next_link(trail_settings: Settings) -> None:
    asyncio.run(_write(trail_settings, 4))
    rows = entries(trail_settings)
    second = run_sql(trail_settings, "SELECT * FROM audit_entries WHERE id = :id", id=rows[1].id)[0]
    fields = dict(second._mapping)
    fields["resource_id"] = "case_forged"
    fields["at"] = _at(trail_settings, rows[1].id)
    fields["details"] = {}
    forged = entry_hash(fields)
    run_sql(
        trail_settings,
        "UPDATE audit_entries SET resource_id = 'case_forged', hash = :hash WHERE id = :id",
        hash=forged,
        id=rows[1].id,
    )
    result = asyncio.run(_verify(trail_settings))
    assert result.broken is not None and result.broken.entry_id == rows[2].id
    assert "prev_hash" in result.broken.reason


def _at(settings: Settings, entry_id: str) -> str:
    """The entry's `at` as the API shows it (and as it is hashed)."""
    from casefile.audit.chain import entry_fields
    from casefile.models import AuditEntry

    async def read() -> str:
        db = Database(settings)
        try:
            async with db.transaction(write=False) as session:
                entry = await session.get(AuditEntry, entry_id)
                assert entry is not None
                return str(entry_fields(entry)["at"])
        finally:
            await db.dispose()

    return asyncio.run(read())


def test_a_deleted_entry_is_found_at_the_next_one(trail_settings: Settings) -> None:
    asyncio.run(_write(trail_settings, 5))
    rows = entries(trail_settings)
    run_sql(trail_settings, "DELETE FROM audit_entries WHERE id = :id", id=rows[2].id)
    result = asyncio.run(_verify(trail_settings))
    assert result.broken is not None and result.broken.entry_id == rows[3].id
    assert "deleted" in result.broken.reason


def test_deleting_the_newest_entries_is_found(trail_settings: Settings) -> None:
    asyncio.run(_write(trail_settings, 5))
    run_sql(trail_settings, "DELETE FROM audit_entries WHERE seq >= 4")
    result = asyncio.run(_verify(trail_settings))
    assert result.broken is not None and result.broken.entry_id is None
    assert "newest entries were deleted" in result.broken.reason and result.checked == 3


def test_the_head_follows_inserts_forward_only(trail_settings: Settings) -> None:
    # The database moves the head with each INSERT (migration 0015), never back: newest entries
    # deleted and then put back from a copy leave the head where it was, and the chain whole.
    asyncio.run(_write(trail_settings, 5))
    head_before = run_sql(trail_settings, "SELECT last_seq, last_hash FROM audit_chain_head")[0]
    columns = "id, seq, at, actor_type, actor_id, user_id, action, resource_type, resource_id, case_id, "
    columns += "outcome, ip, user_agent, request_id, details, prev_hash, hash"
    run_sql(trail_settings, f"CREATE TABLE kept AS SELECT {columns} FROM audit_entries WHERE seq >= 4")
    run_sql(trail_settings, "DELETE FROM audit_entries WHERE seq >= 4")
    run_sql(trail_settings, f"INSERT INTO audit_entries ({columns}) SELECT {columns} FROM kept WHERE seq = 4")
    assert run_sql(trail_settings, "SELECT last_seq, last_hash FROM audit_chain_head")[0] == head_before
    run_sql(trail_settings, f"INSERT INTO audit_entries ({columns}) SELECT {columns} FROM kept WHERE seq = 5")
    result = asyncio.run(_verify(trail_settings))
    assert result.broken is None and result.checked == 5
    asyncio.run(_write(trail_settings, 1))  # the next append extends the restored chain
    assert run_sql(trail_settings, "SELECT last_seq FROM audit_chain_head")[0].last_seq == 6
    assert asyncio.run(_verify(trail_settings)).checked == 6


def test_reordered_entries_are_found(trail_settings: Settings) -> None:
    asyncio.run(_write(trail_settings, 5))
    rows = entries(trail_settings)
    # Swap the positions of entries 2 and 3 (through a free number: seq is unique).
    run_sql(trail_settings, "UPDATE audit_entries SET seq = 1000 WHERE seq = 2")
    run_sql(trail_settings, "UPDATE audit_entries SET seq = 2 WHERE seq = 3")
    run_sql(trail_settings, "UPDATE audit_entries SET seq = 3 WHERE seq = 1000")
    result = asyncio.run(_verify(trail_settings))
    assert result.broken is not None and result.broken.entry_id == rows[2].id  # now second in line
    assert result.checked == 1


def test_the_canonical_form_is_sorted_compact_utf8() -> None:
    fields = {
        "id": "aud_1",
        "seq": 1,
        "at": "2026-11-23T03:00:00.000Z",
        "actor_type": "user",
        "actor_id": "user_1",
        "user_id": "user_1",
        "action": "case.read",
        "resource_type": "case",
        "resource_id": "case_1",
        "case_id": "case_1",
        "outcome": "success",
        "ip": "127.0.0.1",
        "user_agent": "tester",
        "request_id": "req_1",
        "details": {"b": 1, "a": "é"},
        "prev_hash": GENESIS_HASH,
        "hash": "ignored",
    }
    text = canonical_json(fields).decode("utf-8")
    assert text.startswith('{"action":"case.read","actor_id":"user_1"')
    assert '"details":{"a":"é","b":1}' in text and 'hash":"ignored' not in text and " " not in text


# --- concurrent writers ------------------------------------------------------------------------

WRITERS = 8
ENTRIES_EACH = 15


async def _write_concurrently(settings: Settings) -> None:
    # Two Database objects stand for two processes; each writer is a transaction of its own on a
    # connection of its own, all running at once.
    dbs = [Database(settings), Database(settings)]

    async def writer(index: int) -> None:
        db = dbs[index % 2]
        for n in range(ENTRIES_EACH):
            with request_context(RequestContext(request_id=f"req_w{index}_{n}")):
                async with db.transaction(write=True) as session:
                    # Two entries in one transaction: they stay consecutive in the chain.
                    record(session, "case.updated", resource_id=f"w{index}", details={"n": n, "part": 1})
                    record(session, "case.updated", resource_id=f"w{index}", details={"n": n, "part": 2})
                    await asyncio.sleep(0)  # let the other writers interleave

    try:
        await asyncio.gather(*(writer(i) for i in range(WRITERS)))
    finally:
        for db in dbs:
            await db.dispose()


def test_concurrent_writers_never_fork_the_chain(trail_settings: Settings) -> None:
    asyncio.run(_write_concurrently(trail_settings))
    total = WRITERS * ENTRIES_EACH * 2
    rows = run_sql(trail_settings, "SELECT seq, prev_hash, hash, request_id FROM audit_entries ORDER BY seq")
    assert [r.seq for r in rows] == list(range(1, total + 1))
    assert len({r.prev_hash for r in rows}) == total  # no two entries extend the same one
    for earlier, later in itertools.pairwise(rows):
        assert later.prev_hash == earlier.hash
    for first, second in zip(rows[::2], rows[1::2], strict=True):
        assert first.request_id == second.request_id  # a transaction's entries are not split
    head = run_sql(trail_settings, "SELECT last_seq, last_hash FROM audit_chain_head")
    assert (head[0].last_seq, head[0].last_hash) == (total, rows[-1].hash)
    result = asyncio.run(_verify(trail_settings))
    assert result.broken is None and result.checked == total


def test_a_rolled_back_transaction_leaves_no_entry(trail_settings: Settings) -> None:
    async def fail() -> None:
        db = Database(trail_settings)
        try:
            async with db.transaction(write=True) as session:
                record(session, "case.deleted", resource_id="case_x")
                raise RuntimeError("the change fails")
        except RuntimeError:
            pass
        finally:
            await db.dispose()

    asyncio.run(fail())
    assert entries(trail_settings) == []
    assert asyncio.run(_verify(trail_settings)).broken is None
