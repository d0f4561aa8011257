"""`casefile audit verify`, `audit export` and `audit heads` against a real database."""

from __future__ import annotations

import asyncio
import csv
import itertools
import json
from pathlib import Path

from click.testing import CliRunner, Result

from casefile.audit.hashing import content_hash
from casefile.audit.service import record_apart
from casefile.cli import main
from casefile.db import Database
from casefile.request_context import RequestContext, request_context
from casefile.settings import Settings
from tests.audit.conftest import sequence
from tests.support.servers import run_sql


def casefile(settings: Settings, *args: str) -> Result:
    env = {"CASEFILE_DATA_DIR": str(settings.data_dir)}
    if settings.database_url:
        env["CASEFILE_DATABASE_URL"] = settings.database_url
    return CliRunner().invoke(main, list(args), env=env)


def fill(settings: Settings, count: int) -> None:
    async def write() -> None:
        db = Database(settings)
        try:
            with request_context(
                RequestContext(request_id="req_cli", ip="10.0.0.1", user_agent="ünïcode agent")
            ):
                for n in range(count):
                    await record_apart(db, "document.read", resource_id=f"doc_{n}", details={"n": n})
        finally:
            await db.dispose()

    asyncio.run(write())
    sequence(settings)


def test_verify_says_intact_then_names_the_edited_entry(trail_settings: Settings) -> None:
    fill(trail_settings, 6)
    result = casefile(trail_settings, "audit", "verify")
    assert result.exit_code == 0, result.output
    assert "intact: 6 entries, 1 signed tree heads" in result.stdout
    fourth = run_sql(trail_settings, "SELECT id FROM audit_entries WHERE seq = 4")[0].id
    run_sql(trail_settings, "UPDATE audit_entries SET outcome = 'denied' WHERE id = :id", id=fourth)
    result = casefile(trail_settings, "audit", "verify")
    assert result.exit_code == 1
    assert fourth in result.stderr and "seq 4" in result.stderr and "edited" in result.stderr


def test_verify_names_the_entry_after_a_deleted_one(trail_settings: Settings) -> None:
    fill(trail_settings, 4)
    after = run_sql(trail_settings, "SELECT id FROM audit_entries WHERE seq = 3")[0].id
    run_sql(trail_settings, "DELETE FROM audit_entries WHERE seq = 2")
    result = casefile(trail_settings, "audit", "verify")
    assert result.exit_code == 1 and after in result.stderr and "deleted" in result.stderr


def test_heads_kept_outside_catch_a_rewritten_log(trail_settings: Settings, tmp_path: Path) -> None:
    fill(trail_settings, 3)
    kept = tmp_path / "heads.jsonl"
    assert casefile(trail_settings, "audit", "heads", "--output", str(kept)).exit_code == 0
    fill(trail_settings, 2)
    appended = casefile(trail_settings, "audit", "heads", "--output", str(kept), "--after-size", "3")
    assert "appended 1 tree heads" in appended.stderr
    lines = [json.loads(line) for line in kept.read_text().splitlines()]
    assert [line["tree_size"] for line in lines] == [3, 5] and len(lines[0]["public_key"]) == 64
    ok = casefile(trail_settings, "audit", "verify", "--kept-heads", str(kept))
    assert ok.exit_code == 0 and "2 kept heads" in ok.stdout, ok.output
    # The whole log rebuilt with an entry changed (hash recomputed), new tree, new signed heads.
    first = run_sql(trail_settings, "SELECT id, seq FROM audit_entries WHERE seq = 1")[0]
    listed = json.loads(casefile(trail_settings, "audit", "heads").stdout.splitlines()[0])
    assert listed["tree_size"] == 3
    shown = _shown(trail_settings, first.id)
    run_sql(
        trail_settings,
        "UPDATE audit_entries SET request_id = 'req_rewritten', hash = :hash WHERE id = :id",
        hash=content_hash({**shown, "request_id": "req_rewritten"}),
        id=first.id,
    )
    run_sql(trail_settings, "DELETE FROM audit_tree_nodes")
    run_sql(trail_settings, "DELETE FROM audit_tree_heads")
    run_sql(trail_settings, "UPDATE audit_entries SET seq = NULL, prev_hash = NULL")
    run_sql(
        trail_settings,
        "UPDATE audit_log_state SET tree_size = 0, root_hash = :empty",
        empty="e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    )
    sequence(trail_settings)
    assert casefile(trail_settings, "audit", "verify").exit_code == 0  # consistent in itself
    caught = casefile(trail_settings, "audit", "verify", "--kept-heads", str(kept))
    assert caught.exit_code == 1 and "kept tree head" in caught.stderr and "rewritten" in caught.stderr
    bad = tmp_path / "not-heads.jsonl"
    bad.write_text('{"tree_size": 1}\n')
    refused = casefile(trail_settings, "audit", "verify", "--kept-heads", str(bad))
    assert refused.exit_code != 0 and "not tree heads" in refused.output


def _shown(settings: Settings, entry_id: str) -> dict[str, object]:
    from casefile.audit.hashing import entry_fields
    from casefile.models import AuditEntry

    async def read() -> dict[str, object]:
        db = Database(settings)
        try:
            async with db.transaction(write=False) as session:
                entry = await session.get(AuditEntry, entry_id)
                assert entry is not None
                return entry_fields(entry)
        finally:
            await db.dispose()

    return asyncio.run(read())


def test_export_jsonl_holds_every_placed_entry_as_hashed(trail_settings: Settings, tmp_path: Path) -> None:
    fill(trail_settings, 12)
    target = tmp_path / "trail.jsonl"
    result = casefile(trail_settings, "audit", "export", "--output", str(target))
    assert result.exit_code == 0, result.output
    assert "exported 12 entries" in result.stdout and "exporting" in result.stderr  # the progress bar
    lines = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    assert [e["seq"] for e in lines] == list(range(1, 13)) and all(e["sequenced"] for e in lines)
    assert all(content_hash(e) == e["hash"] for e in lines)
    assert all(later["prev_hash"] == earlier["hash"] for earlier, later in itertools.pairwise(lines))
    assert lines[0]["user_agent"] == "ünïcode agent" and lines[0]["details"] == {"n": 0}
    # The export is recorded (placed by the sequencer after the entries it wrote).
    sequence(trail_settings)
    recorded = run_sql(trail_settings, "SELECT action, seq FROM audit_entries ORDER BY seq DESC LIMIT 1")[0]
    assert (recorded.action, recorded.seq) == ("audit.exported", 13)
    again = casefile(trail_settings, "audit", "export", "--output", str(target))
    assert again.exit_code != 0 and "exists" in again.output


def test_export_csv(trail_settings: Settings, tmp_path: Path) -> None:
    fill(trail_settings, 3)
    target = tmp_path / "trail.csv"
    result = casefile(trail_settings, "audit", "export", "--output", str(target), "--format", "csv")
    assert result.exit_code == 0, result.output
    with target.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["seq"] for r in rows] == ["1", "2", "3"]
    assert rows[0]["action"] == "document.read" and json.loads(rows[2]["details"]) == {"n": 2}
    assert rows[1]["prev_hash"] == rows[0]["hash"] and rows[0]["ip"] == "10.0.0.1"
