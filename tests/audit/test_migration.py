"""Migration 0017 on a database that has a hash chain (SQLite and PostgreSQL): an intact chain
becomes the log's first leaves, in its order, and the log goes on from it; a broken one stops
the migration, naming the entry, and changes nothing."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any, cast

import pytest
from alembic import command
from sqlalchemy import Table, insert

from casefile.audit.hashing import GENESIS_HASH, chained_hash
from casefile.clock import format_timestamp, utcnow
from casefile.db import Database
from casefile.migrate import alembic_config, upgrade
from casefile.models import AuditEntry
from casefile.settings import Settings
from tests.audit.conftest import check, entries, fill, sequence
from tests.support.servers import make_settings, run_sql


@pytest.fixture
def chained(database: tuple[Path, str | None]) -> Iterator[Settings]:
    """A database at revision 0016 holding a chain of five entries, as the old code wrote them."""
    settings = make_settings(*database)
    settings.ensure_data_dir()
    command.upgrade(alembic_config(settings), "0016")
    start = utcnow().replace(microsecond=0) - timedelta(hours=1)
    rows, last = [], GENESIS_HASH
    for seq in range(1, 6):
        at = start + timedelta(seconds=seq)
        fields: dict[str, Any] = {
            "id": f"aud_old{seq}",
            "seq": seq,
            "at": format_timestamp(at),
            "actor_type": "user",
            "actor_id": "user_1",
            "user_id": "user_1",
            "action": "case.read",
            "resource_type": "case",
            "resource_id": f"case_{seq}",
            "case_id": f"case_{seq}",
            "outcome": "success",
            "ip": "10.0.0.1",
            "user_agent": "older casefile",
            "request_id": f"req_{seq}",
            "details": {"n": seq, "name": "é"},
            "prev_hash": last,
        }
        last = fields["hash"] = chained_hash(fields)
        rows.append({**fields, "at": at})

    async def write() -> None:
        db = Database(settings)
        try:
            async with db.engine.begin() as connection:
                await connection.execute(insert(cast(Table, AuditEntry.__table__)), rows)
        finally:
            await db.dispose()

    asyncio.run(write())
    yield settings


def test_an_intact_chain_becomes_the_first_leaves_and_the_log_goes_on(chained: Settings) -> None:
    before = entries(chained)
    upgrade(chained)
    state = run_sql(chained, "SELECT tree_size, legacy_size FROM audit_log_state")[0]
    assert (state.tree_size, state.legacy_size) == (5, 5)
    assert entries(chained) == before  # positions, links and hashes as they were
    waiting = check(chained)
    assert waiting.broken is None and waiting.checked == 5 and waiting.notes  # no signed head yet
    fill(chained, 2, "new")
    sequence(chained)  # the first start signs the chain's head, then places the new entries
    after = entries(chained)
    assert [r.id for r in after[:5]] == [f"aud_old{n}" for n in range(1, 6)]
    assert [r.seq for r in after] == list(range(1, 8)) and after[5].prev_hash == after[4].hash
    heads = run_sql(chained, "SELECT tree_size FROM audit_tree_heads ORDER BY tree_size")
    assert [h.tree_size for h in heads] == [5, 7]
    result = check(chained)
    assert result.broken is None and result.checked == 7 and result.heads == 2
    # An old entry is still checked with the rule it was hashed under.
    run_sql(chained, "UPDATE audit_entries SET outcome = 'denied' WHERE id = 'aud_old2'")
    broken = check(chained).broken
    assert broken is not None and broken.entry_id == "aud_old2" and "edited" in broken.reason


def test_a_broken_chain_refuses_to_migrate(chained: Settings) -> None:
    run_sql(chained, "UPDATE audit_entries SET resource_id = 'case_other' WHERE id = 'aud_old3'")
    with pytest.raises(Exception, match=r"broken at entry aud_old3 \(seq 3\).*edited") as refused:
        upgrade(chained)
    assert "changes nothing" in str(refused.value)
    assert run_sql(chained, "SELECT version_num FROM alembic_version")[0].version_num == "0016"
    assert run_sql(chained, "SELECT last_seq FROM audit_chain_head")[0].last_seq == 5


def test_deleted_newest_entries_refuse_to_migrate(chained: Settings) -> None:
    run_sql(chained, "DELETE FROM audit_entries WHERE seq = 5")
    with pytest.raises(Exception, match="newest entries were deleted"):
        upgrade(chained)
