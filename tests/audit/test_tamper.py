"""What `verify` finds after the log is changed directly in the database (SQLite and PostgreSQL):
an entry changed, deleted, inserted or reordered; the log truncated; a tree head altered; and the
whole log rewritten with new heads, found against a head kept before."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from casefile.audit.export import export_heads
from casefile.audit.hashing import content_hash, entry_fields
from casefile.db import Database
from casefile.models import AuditEntry
from casefile.settings import Settings
from tests.audit.conftest import check, entries, fill, sequence
from tests.support.servers import run_sql

COLUMNS = (
    "id, seq, at, actor_type, actor_id, user_id, action, resource_type, resource_id, case_id, "
    "outcome, ip, user_agent, request_id, details, prev_hash, hash"
)


def logged(settings: Settings, count: int = 6) -> list[object]:
    """A log of `count` entries in two signed heads (after 3, then all)."""
    fill(settings, 3, "first")
    sequence(settings)
    fill(settings, count - 3, "second")
    sequence(settings)
    return entries(settings)


def kept_heads(settings: Settings) -> list[dict[str, object]]:
    """What a firm keeps outside: `casefile audit heads`' lines."""
    import io

    async def run() -> str:
        db = Database(settings)
        out = io.StringIO()
        try:
            await export_heads(db, out)
        finally:
            await db.dispose()
        return out.getvalue()

    return [json.loads(line) for line in asyncio.run(run()).splitlines()]


def test_an_untouched_log_verifies(trail_settings: Settings) -> None:
    logged(trail_settings)
    result = check(trail_settings)
    assert result.broken is None and result.checked == 6 and result.heads == 2


def test_an_edited_entry_is_named(trail_settings: Settings) -> None:
    third = logged(trail_settings)[2]
    run_sql(trail_settings, "UPDATE audit_entries SET resource_id = 'case_other' WHERE id = :id", id=third.id)
    broken = check(trail_settings).broken
    assert broken is not None and broken.entry_id == third.id and "edited" in broken.reason


def test_an_edit_with_its_hash_recomputed_is_named(trail_settings: Settings) -> None:
    second = logged(trail_settings)[1]
    fields = {**shown(trail_settings, second.id), "resource_id": "case_forged"}
    run_sql(
        trail_settings,
        "UPDATE audit_entries SET resource_id = 'case_forged', hash = :hash WHERE id = :id",
        hash=content_hash(fields),
        id=second.id,
    )
    result = check(trail_settings)
    assert result.broken is not None and result.broken.entry_id == second.id
    assert "not the entry the log placed" in result.broken.reason and result.checked == 1


def test_a_deleted_entry_is_found_at_the_next_one(trail_settings: Settings) -> None:
    rows = logged(trail_settings)
    run_sql(trail_settings, "DELETE FROM audit_entries WHERE id = :id", id=rows[2].id)
    broken = check(trail_settings).broken
    assert broken is not None and broken.entry_id == rows[3].id and "missing (deleted)" in broken.reason


def test_an_inserted_entry_is_named(trail_settings: Settings) -> None:
    rows = logged(trail_settings)
    # A forged entry put in third place: the later ones moved up one, the links made to fit.
    fields = {**shown(trail_settings, rows[2].id), "id": "aud_forged", "resource_id": "case_forged"}
    run_sql(trail_settings, "UPDATE audit_entries SET seq = seq + 1000 WHERE seq >= 3")
    run_sql(trail_settings, "UPDATE audit_entries SET seq = seq - 999 WHERE seq >= 1000")
    run_sql(trail_settings, "UPDATE audit_entries SET prev_hash = NULL WHERE id = :id", id=rows[2].id)
    run_sql(
        trail_settings,
        f"INSERT INTO audit_entries ({COLUMNS}) SELECT 'aud_forged', 3, at, actor_type, actor_id, user_id, "
        "action, resource_type, 'case_forged', case_id, outcome, ip, user_agent, request_id, details, "
        ":prev, :hash FROM audit_entries WHERE id = :id",
        prev=rows[1].hash,
        hash=content_hash(fields),
        id=rows[2].id,
    )
    broken = check(trail_settings).broken
    assert broken is not None and broken.entry_id == "aud_forged" and broken.seq == 3


def test_an_entry_added_after_the_newest_head_is_named(trail_settings: Settings) -> None:
    rows = logged(trail_settings)
    run_sql(
        trail_settings,
        f"INSERT INTO audit_entries ({COLUMNS}) SELECT 'aud_appended', 7, at, actor_type, actor_id, user_id, "
        "action, resource_type, resource_id, case_id, outcome, ip, user_agent, request_id, details, "
        ":prev, hash FROM audit_entries WHERE id = :id",
        prev=rows[-1].hash,
        id=rows[-1].id,
    )
    run_sql(trail_settings, "UPDATE audit_log_state SET tree_size = 7")
    broken = check(trail_settings).broken
    assert broken is not None and broken.seq == 7


def test_reordered_entries_are_found(trail_settings: Settings) -> None:
    rows = logged(trail_settings)
    # Swap positions 2 and 3 (through a free number: positions are unique), links and all.
    run_sql(trail_settings, "UPDATE audit_entries SET seq = 1000 WHERE seq = 2")
    run_sql(trail_settings, "UPDATE audit_entries SET seq = 2 WHERE seq = 3")
    run_sql(trail_settings, "UPDATE audit_entries SET seq = 3 WHERE seq = 1000")
    result = check(trail_settings)
    assert result.broken is not None and result.broken.entry_id == rows[2].id  # now second in line
    assert "reordered" in result.broken.reason and result.checked == 1


def test_a_truncated_log_is_found(trail_settings: Settings) -> None:
    logged(trail_settings)
    kept = kept_heads(trail_settings)
    run_sql(trail_settings, "DELETE FROM audit_entries WHERE seq >= 5")
    broken = check(trail_settings).broken
    assert broken is not None and "truncated" in broken.reason and "position 4" in broken.reason
    # With the newest head and the sequencer's record cut back to an older head as well, nothing
    # inside says so any more; a head kept outside does.
    run_sql(trail_settings, "DELETE FROM audit_entries WHERE seq = 4")
    run_sql(trail_settings, "DELETE FROM audit_tree_heads WHERE tree_size = 6")
    run_sql(trail_settings, "DELETE FROM audit_tree_nodes WHERE node_index >= 3 OR level > 1")
    root = kept[0]["root_hash"]
    run_sql(trail_settings, "UPDATE audit_log_state SET tree_size = 3, root_hash = :root", root=root)
    assert check(trail_settings).broken is None
    broken = check(trail_settings, kept).broken
    assert broken is not None and broken.tree_size == 6 and "truncated" in broken.reason


def test_an_altered_tree_head_is_named(trail_settings: Settings) -> None:
    logged(trail_settings)
    run_sql(
        trail_settings, "UPDATE audit_tree_heads SET root_hash = :root WHERE tree_size = 3", root="ab" * 32
    )
    broken = check(trail_settings).broken
    assert broken is not None and broken.tree_size == 3 and "signature" in broken.reason


def test_a_rewritten_log_with_new_heads_is_found_against_a_kept_head(trail_settings: Settings) -> None:
    rows = logged(trail_settings)
    kept = kept_heads(trail_settings)
    assert [head["tree_size"] for head in kept] == [3, 6]
    # Someone with the database and the signing key rewrites the second entry, then builds the whole
    # log again from scratch: new tree, new heads, signed with the real key.
    fields = {**shown(trail_settings, rows[1].id), "resource_id": "case_rewritten"}
    run_sql(
        trail_settings,
        "UPDATE audit_entries SET resource_id = 'case_rewritten', hash = :hash WHERE id = :id",
        hash=content_hash(fields),
        id=rows[1].id,
    )
    for statement in (
        "DELETE FROM audit_tree_nodes",
        "DELETE FROM audit_tree_heads",
        "UPDATE audit_entries SET seq = NULL, prev_hash = NULL",
        "UPDATE audit_log_state SET tree_size = 0, root_hash = :empty, lease_expires_at = NULL",
    ):
        run_sql(
            trail_settings,
            statement,
            empty="e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        )
    sequence(trail_settings)
    assert check(trail_settings).broken is None  # consistent in itself
    result = check(trail_settings, kept)
    assert result.broken is not None and result.broken.tree_size == 3
    assert "kept tree head" in result.broken.reason and "rewritten" in result.broken.reason


def shown(settings: Settings, entry_id: str) -> dict[str, Any]:
    """The entry as the API shows it (and as it is hashed)."""

    async def read() -> dict[str, Any]:
        db = Database(settings)
        try:
            async with db.transaction(write=False) as session:
                entry = await session.get(AuditEntry, entry_id)
                assert entry is not None
                return entry_fields(entry)
        finally:
            await db.dispose()

    return asyncio.run(read())
