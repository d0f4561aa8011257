"""The sequencer on a real database (SQLite and PostgreSQL): entries committed in another order
than they were made are placed, late but never skipped; writers share nothing; one sequencer
leads at a time and a crashed one is taken over; heads are signed, and old keys stay."""

from __future__ import annotations

import asyncio
import base64
import itertools
import secrets

from casefile.audit import log_repository as store
from casefile.audit.hashing import GENESIS_HASH
from casefile.audit.sequencer import Sequencer
from casefile.audit.service import append_pending, record, record_apart
from casefile.audit.signing import signature_valid
from casefile.background import TreeHeadEvents
from casefile.db import Database
from casefile.request_context import RequestContext, request_context
from casefile.settings import Settings
from tests.audit.conftest import check, entries, fill, query, sequence, sequence_all, until_none_waits
from tests.support.servers import make_settings, run_sql


def test_entries_committed_out_of_order_are_placed_late_never_skipped(trail_settings: Settings) -> None:
    async def run() -> None:
        db = Database(trail_settings)
        sequencer = Sequencer(db, trail_settings)
        await sequencer._lead()
        try:
            async with db.transaction(write=True) as first:
                record(first, "case.updated", resource_id="made_first")  # the older id
                if not db.is_sqlite:
                    # PostgreSQL: its row is even inserted, uncommitted, while the later one commits.
                    # (SQLite's writers take turns: the first transaction has not begun writing.)
                    await append_pending(first)
                async with db.transaction(write=True) as second:
                    record(second, "case.updated", resource_id="made_second")
                assert await sequencer.step() == 1  # the committed one only
                placed = await query(db, "SELECT resource_id, seq FROM audit_entries ORDER BY id")
                assert [(r.resource_id, r.seq) for r in placed] == [("made_second", 1)]
            assert await sequencer.step() == 1  # committed now: the next position
        finally:
            await db.dispose()

    asyncio.run(run())
    rows = run_sql(
        trail_settings, "SELECT id, resource_id, seq, prev_hash, hash FROM audit_entries ORDER BY seq"
    )
    assert [r.resource_id for r in rows] == ["made_second", "made_first"]
    assert rows[1].id < rows[0].id  # made first, placed second
    assert rows[0].prev_hash == GENESIS_HASH and rows[1].prev_hash == rows[0].hash
    result = check(trail_settings)
    assert result.broken is None and result.checked == 2 and result.waiting == 0


WRITERS = 8
ENTRIES_EACH = 10


def test_concurrent_writers_share_nothing_and_every_entry_is_placed_once(trail_settings: Settings) -> None:
    async def run() -> None:
        # Two Database objects stand for two processes; the sequencer runs while they write.
        dbs = [Database(trail_settings), Database(trail_settings)]
        stop = asyncio.Event()
        sequencer = Sequencer(
            dbs[0], trail_settings.model_copy(update={"audit_sequence_interval_seconds": 0.05})
        )
        running = asyncio.create_task(sequencer.run(stop))

        async def writer(index: int) -> None:
            for n in range(ENTRIES_EACH):
                with request_context(RequestContext(request_id=f"req_w{index}_{n}")):
                    async with dbs[index % 2].transaction(write=True) as session:
                        record(session, "case.updated", resource_id=f"w{index}", details={"n": n, "part": 1})
                        record(session, "case.updated", resource_id=f"w{index}", details={"n": n, "part": 2})
                        await asyncio.sleep(0)

        try:
            await asyncio.gather(*(writer(i) for i in range(WRITERS)))
            total = WRITERS * ENTRIES_EACH * 2
            await until_none_waits(dbs[1], total)
        finally:
            stop.set()
            await running
            for db in dbs:
                await db.dispose()

    asyncio.run(run())
    total = WRITERS * ENTRIES_EACH * 2
    rows = entries(trail_settings)
    assert [r.seq for r in rows] == list(range(1, total + 1))
    for earlier, later in itertools.pairwise(rows):
        assert later.prev_hash == earlier.hash
    result = check(trail_settings)
    assert result.broken is None and result.checked == total and result.heads >= 1
    # The lease was handed back on the clean stop: another process may lead at once.
    assert run_sql(trail_settings, "SELECT lease_expires_at FROM audit_log_state")[0].lease_expires_at is None


def test_one_sequencer_leads_and_a_crashed_one_is_taken_over(trail_settings: Settings) -> None:
    fill(trail_settings, 3, "before")

    async def run() -> tuple[str, str]:
        crashed_db, other_db = Database(trail_settings), Database(trail_settings)
        fast = trail_settings.model_copy(update={"audit_sequence_interval_seconds": 0.05})
        crashed = Sequencer(crashed_db, fast, lease_seconds=1.0)
        await crashed._lead()
        assert crashed.token is not None
        # It dies here: it never places anything nor hands its lease back.
        other = Sequencer(other_db, fast, lease_seconds=1.0)
        await other._lead()
        assert other.token is None  # the lease is held
        stop = asyncio.Event()
        running = asyncio.create_task(other.run(stop))
        try:
            await until_none_waits(other_db)
            # The crashed one comes back to life (a process paused past its lease): its batch is
            # fenced off by the lease's token, and it steps down.
            await record_apart(crashed_db, "case.read", resource_id="late")
            assert await crashed._place_batch() == 0 and crashed.token is None
            await until_none_waits(other_db)
        finally:
            stop.set()
            await running
            await crashed_db.dispose()
            await other_db.dispose()
        return crashed.holder, other.holder

    crashed_holder, other_holder = asyncio.run(run())
    assert crashed_holder != other_holder
    heads = run_sql(trail_settings, "SELECT tree_size FROM audit_tree_heads ORDER BY tree_size")
    assert heads[-1].tree_size == 4  # the late entry was placed by the one that took over
    assert check(trail_settings).broken is None


def test_heads_are_signed_and_a_rotated_key_is_kept(trail_settings: Settings) -> None:
    fill(trail_settings, 3, "old")
    sequence(trail_settings)
    seed = base64.b64encode(secrets.token_bytes(32)).decode()
    rotated = make_settings(trail_settings.data_dir, trail_settings.database_url, audit_signing_key=seed)
    fill(rotated, 2, "new")

    async def run() -> None:
        db = Database(rotated)
        try:
            await sequence_all(db, rotated)
        finally:
            await db.dispose()

    asyncio.run(run())
    keys = {
        r.key_id: bytes.fromhex(r.public_key) for r in run_sql(rotated, "SELECT * FROM audit_signing_keys")
    }
    heads = run_sql(rotated, "SELECT * FROM audit_tree_heads ORDER BY tree_size")
    assert [h.tree_size for h in heads] == [3, 5] and len(keys) == 2
    assert heads[0].key_id != heads[1].key_id
    for head in heads:
        assert signature_valid(
            keys[head.key_id],
            head.tree_size,
            head.timestamp,
            bytes.fromhex(head.root_hash),
            bytes.fromhex(head.signature),
        )
    assert check(rotated).broken is None and check(rotated).heads == 2


def test_nothing_waits_without_a_sequencer_and_the_first_start_signs_the_empty_log(
    trail_settings: Settings,
) -> None:
    async def run() -> None:
        db = Database(trail_settings)
        try:
            sequencer = await sequence_all(db, trail_settings)
            async with db.transaction(write=False) as session:
                head = await store.latest_head(session)
            assert head is not None and head.tree_size == 0 and sequencer.frontier.size == 0
        finally:
            await db.dispose()

    asyncio.run(run())
    fill(trail_settings, 2)  # written with no sequencer running: nothing blocks
    waiting = check(trail_settings)
    assert waiting.broken is None and waiting.waiting == 2 and waiting.checked == 0


def test_tree_head_events_are_the_first_head_then_one_per_interval() -> None:
    events = TreeHeadEvents(every_seconds=60)
    heads = (1_000, 1_250, 30_000, 60_999, 61_000, 61_250, 121_000)
    assert [t for t in heads if events.announces(t)] == [1_000, 61_000, 121_000]
    every_head = TreeHeadEvents(every_seconds=0)
    assert [t for t in (1_000, 1_000, 1_001) if every_head.announces(t)] == [1_000, 1_000, 1_001]
