"""`casefile backup` and `casefile restore`, as an operator uses them: a backup taken while a server
runs and writes continue, restored into a fresh data dir and database, where a server finds every
case, document byte and webhook as they were."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import stat
import tarfile
from contextlib import ExitStack
from pathlib import Path

import pytest

from casefile.migrate import alembic_config
from casefile.storage import backup_lock
from casefile.webhooks import verify_signature
from tests.backup.scenario import (
    OTHER_SECRET,
    SECRET,
    Source,
    casefile,
    cli_env,
    every,
    make_target,
    table_count,
    upload,
)
from tests.support.assertions import ok
from tests.support.factories import new_case
from tests.support.servers import BACKENDS, Api, fresh_database, make_settings, serving
from tests.support.waiting import wait_until

pytestmark = pytest.mark.slow  # `casefile backup` and `restore` as child processes


def test_backup_is_one_private_archive_with_a_summary(source: Source) -> None:
    archive = source.archive
    assert stat.S_IMODE(archive.stat().st_mode) == 0o600  # it holds the keys
    assert not archive.with_name(archive.name + ".partial").exists()
    summary = source.backup.stdout.strip().splitlines()[-1]
    fields = dict(part.split("=", 1) for part in summary.split()[2:])
    assert summary.split()[1] == str(archive)
    assert int(fields["size"]) == archive.stat().st_size
    assert fields["sha256"] == hashlib.sha256(archive.read_bytes()).hexdigest()
    assert "database: " in source.backup.stderr and "content: " in source.backup.stderr

    with tarfile.open(archive) as tar:
        names = tar.getnames()
        manifest = json.loads(tar.extractfile("manifest.json").read())  # type: ignore[union-attr]
        digest = tar.extractfile("manifest.json.sha256").read().split()[0].decode()  # type: ignore[union-attr]
        assert digest == hashlib.sha256(tar.extractfile("manifest.json").read()).hexdigest()  # type: ignore[union-attr]
        for name, member in manifest["members"].items():
            data = tar.extractfile(name).read()  # type: ignore[union-attr]
            assert hashlib.sha256(data).hexdigest() == member["sha256"] and len(data) == member["size"]
    assert names[:2] == ["manifest.json", "manifest.json.sha256"]
    assert {"keys/jwt-secret", "keys/secret-key", manifest["database"]} <= set(names)
    assert manifest["dialect"] == ("sqlite" if source.api.settings.is_sqlite else "postgresql")
    assert manifest["keys_from_environment"] == []
    assert manifest["counts"]["cases"] >= len(source.before) and manifest["counts"]["webhooks"] == 2
    assert len([n for n in names if n.startswith("content/")]) == manifest["content_files"]


def test_backup_completed_is_delivered_to_a_subscribed_webhook(source: Source) -> None:
    [got] = source.receiver.wait_for(event="system.backup_completed")
    assert verify_signature(got.body, got.headers, SECRET)
    data = got.json()["data"]
    archive = source.archive
    assert data["file"] == str(archive) and data["size_bytes"] == archive.stat().st_size
    assert data["sha256"] == hashlib.sha256(archive.read_bytes()).hexdigest()
    assert data["database"] == ("sqlite" if source.api.settings.is_sqlite else "postgresql")
    assert data["documents"] >= 1 and data["duration_ms"] >= 0
    assert source.api.events("system.backup_completed") == [data]


def test_restored_server_has_every_case_document_and_webhook(source: Source, restored: Api) -> None:
    with source.api.admin() as old, restored.client(token=source.api.admin_token) as new:
        # The JWT key came along: a token of the old server is valid on the restored one.
        assert ok(new.get("/users/me"))["email"] == ok(old.get("/users/me"))["email"]

        cases = {c["id"]: c for c in every(new, "/cases")}
        assert source.before <= set(cases)
        originals = {c["id"]: c for c in every(old, "/cases")}
        assert set(cases) <= set(originals)  # nothing the source never had
        for case_id, case in cases.items():
            assert case == originals[case_id]

        restored_documents = 0
        for case_id in cases:
            documents = every(new, f"/cases/{case_id}/documents")
            current = {d["id"]: d for d in every(old, f"/cases/{case_id}/documents")}
            if case_id in source.before:
                assert {d["id"] for d in documents} == set(current)
            for document in documents:
                if document["id"] in current:
                    assert document == current[document["id"]]
                content = new.get(f"/documents/{document['id']}/content")
                assert content.status_code == 200, content.text
                expected = source.uploaded[document["id"]]
                assert hashlib.sha256(content.content).hexdigest() == hashlib.sha256(expected).hexdigest()
                assert document["sha256"] == hashlib.sha256(expected).hexdigest()
                restored_documents += 1
        assert restored_documents >= len(source.before)
        assert source.versions
        for document_id, contents in source.versions.items():
            for number, expected in enumerate(contents, start=1):
                version = new.get(f"/documents/{document_id}/versions/{number}/content")
                assert version.status_code == 200 and version.content == expected

        hooks = every(new, "/admin/webhooks")
        assert hooks == every(old, "/admin/webhooks")
    columns = "id, name, url, events, active, retry_policy, secret_sealed, previous_secrets, created_at"
    query = f"SELECT {columns} FROM webhooks ORDER BY id"
    assert restored.sql(query) == source.api.sql(query)

    # The secret key came along too: the restored webhooks still sign with their own secrets.
    with restored.admin() as admin:
        for hook in hooks:
            body = {"event_type": "case.created", "test_data": {"hook": hook["id"]}}
            outcome = ok(admin.post(f"/admin/webhooks/{hook['id']}/test", json=body))
            assert outcome["attempt"]["success"] is True
    for hook in hooks:
        [got] = wait_until(
            lambda h=hook: [r for r in source.receiver.received() if r.json()["data"] == {"hook": h["id"]}]
        )
        secret = SECRET if hook["name"] == "backups" else "whsec_rotated_0123456789abcdef"
        assert verify_signature(got.body, got.headers, secret)
        if hook["name"] != "backups":  # during the rotation's grace period, the old one signs too
            assert verify_signature(got.body, got.headers, OTHER_SECRET)


def test_documents_deleted_during_the_backup_are_restored_with_their_bytes(
    source: Source, restored: Api
) -> None:
    """The race the backup lock exists for: a document in the snapshot, deleted (with its file
    collected) before the backup copied the file. Whatever the snapshot holds must be complete. (A
    deletion that committed before the snapshot left the document in the snapshot's trash: not
    readable, and not what this asks.)"""
    in_snapshot = {r[0] for r in restored.sql("SELECT id FROM documents WHERE deleted_at IS NULL")}
    with restored.admin() as admin:
        for document_id in source.deleted_during & in_snapshot:
            content = admin.get(f"/documents/{document_id}/content")
            assert content.content == source.uploaded[document_id]


def test_restore_refuses_a_target_that_has_data_unless_forced(
    source: Source, backend: str, tmp_path: Path
) -> None:
    with ExitStack() as stack:
        target = make_target(stack, backend, tmp_path)
        first = casefile("restore", "--input", str(source.archive), env=target.env)
        assert first.returncode == 0, first.stderr
        # An operator's later edit, which a second restore must not silently throw away.
        with serving(target.settings) as api, api.admin() as admin:
            new_case(admin, title="Made after the restore")
        again = casefile("restore", "--input", str(source.archive), env=target.env)
        assert again.returncode != 0
        assert "already holds data" in again.stderr and "--force" in again.stderr
        with serving(target.settings) as api, api.admin() as admin:
            assert "Made after the restore" in {c["title"] for c in every(admin, "/cases")}
        forced = casefile("restore", "--input", str(source.archive), "--force", env=target.env)
        assert forced.returncode == 0, forced.stderr
        with serving(target.settings) as api, api.admin() as admin:
            titles = {c["title"] for c in every(admin, "/cases")}
        assert "Made after the restore" not in titles and "Backup case 0" in titles


@pytest.mark.parametrize("member", ["database", "content"])
def test_a_damaged_archive_is_refused_and_changes_nothing(
    source: Source, backend: str, tmp_path: Path, member: str
) -> None:
    damaged = tmp_path / "damaged.tar"
    shutil.copyfile(source.archive, damaged)
    with tarfile.open(damaged) as tar:
        info = next(
            m for m in tar.getmembers() if m.name.startswith(member) and m.size > 100
        )  # a byte in the middle of a member's data, not in the padding
    with damaged.open("r+b") as handle:
        handle.seek(info.offset_data + info.size // 2)
        byte = handle.read(1)
        handle.seek(-1, os.SEEK_CUR)
        handle.write(bytes([byte[0] ^ 0x01]))
    with ExitStack() as stack:
        target = make_target(stack, backend, tmp_path)
        result = casefile("restore", "--input", str(damaged), env=target.env)
        assert result.returncode != 0
        assert "damaged" in result.stderr and info.name in result.stderr
        assert not (target.settings.data_dir / "casefile.db").exists()
        assert not (target.settings.data_dir / "secret-key").exists()
        if target.settings.database_url:
            assert table_count(target.settings) == 0


@pytest.mark.skipif("postgresql" not in BACKENDS, reason="needs both databases")
def test_restore_into_the_other_kind_of_database_is_refused(
    source: Source, backend: str, tmp_path: Path
) -> None:
    other = "sqlite" if backend == "postgresql" else "postgresql"
    with ExitStack() as stack:
        target = make_target(stack, other, tmp_path)
        result = casefile("restore", "--input", str(source.archive), env=target.env)
    assert result.returncode != 0
    assert f"backup of a {backend} database" in result.stderr


def test_the_backup_lock_keeps_a_file_whose_document_is_deleted_during_a_backup(
    backend: str, tmp_path: Path
) -> None:
    with ExitStack() as stack:
        data_dir = tmp_path / "data"
        settings = make_settings(data_dir, stack.enter_context(fresh_database(backend, data_dir)))
        content = settings.content_dir
        with serving(settings) as api, api.admin() as admin:
            case = new_case(admin)
            kept = upload(admin, case["id"], b"deleted while a backup runs\n", "a.txt")
            gone = upload(admin, case["id"], b"deleted with no backup running\n", "b.txt")
            kept_file = content / kept["sha256"][:2] / kept["sha256"][2:4] / kept["sha256"]
            gone_file = content / gone["sha256"][:2] / gone["sha256"][2:4] / gone["sha256"]

            ok(admin.delete(f"/documents/{gone['id']}"))
            ok(admin.delete(f"/admin/trash/{gone['id']}"))  # deleted for good: trash, then purge
            assert not gone_file.exists()  # the normal case: the last document goes, so does the file

            with backup_lock(data_dir):  # exactly what `casefile backup` holds while it runs
                ok(admin.delete(f"/documents/{kept['id']}"))
                ok(admin.delete(f"/admin/trash/{kept['id']}"))
                assert kept_file.exists()
            assert kept_file.exists()  # left for later: the backup's snapshot may have needed it
            assert api.sql("SELECT count(*) FROM blobs WHERE sha256 = :s", s=kept["sha256"]) == [(1,)]
        with serving(settings) as api:  # the next start collects it
            assert not kept_file.exists()
            assert api.sql("SELECT count(*) FROM blobs WHERE sha256 = :s", s=kept["sha256"]) == [(0,)]


def test_a_backup_of_an_older_schema_is_migrated_on_restore(backend: str, tmp_path: Path) -> None:
    from alembic import command
    from alembic.script import ScriptDirectory

    with ExitStack() as stack:
        data_dir = tmp_path / "old"
        settings = make_settings(data_dir, stack.enter_context(fresh_database(backend, data_dir)))
        config = alembic_config(settings)
        script = ScriptDirectory.from_config(config)
        head = script.get_current_head()
        previous = script.get_revision(head).down_revision  # type: ignore[union-attr]
        settings.ensure_data_dir()
        command.upgrade(config, str(previous))  # what an older casefile left behind
        archive = tmp_path / "old.tar.gz"
        made = casefile("backup", "--output", str(archive), env=cli_env(settings))
        assert made.returncode == 0, made.stderr
        with tarfile.open(archive) as tar:
            manifest = json.loads(tar.extractfile("manifest.json").read())  # type: ignore[union-attr]
        assert manifest["alembic_revision"] == previous

        target = make_target(stack, backend, tmp_path)
        result = casefile("restore", "--input", str(archive), env=target.env)
        assert result.returncode == 0, result.stderr
        with serving(target.settings) as api:
            assert api.sql("SELECT version_num FROM alembic_version") == [(head,)]


def test_an_edited_manifest_listing_unknown_keys_is_refused(
    source: Source, backend: str, tmp_path: Path
) -> None:
    """The manifest's checksum only catches damage: an archive rebuilt with a manifest that names
    a key it cannot hold is refused before anything is replaced."""
    edited = tmp_path / "edited.tar"
    with tarfile.open(source.archive) as original, tarfile.open(edited, "w") as out:
        for info in original.getmembers():
            data = original.extractfile(info).read()  # type: ignore[union-attr]
            if info.name == "manifest.json":
                manifest = json.loads(data)
                manifest["keys"] = [*manifest["keys"], "../../outside"]
                data = json.dumps(manifest).encode()
                digest = hashlib.sha256(data).hexdigest()
            elif info.name == "manifest.json.sha256":
                data = f"{digest}  manifest.json\n".encode()
            info.size = len(data)
            out.addfile(info, io.BytesIO(data))
    with ExitStack() as stack:
        target = make_target(stack, backend, tmp_path)
        result = casefile("restore", "--input", str(edited), env=target.env)
        assert result.returncode != 0
        assert "manifest lists keys" in result.stderr
        assert not (target.settings.data_dir / "casefile.db").exists()
        if target.settings.database_url:
            assert table_count(target.settings) == 0
