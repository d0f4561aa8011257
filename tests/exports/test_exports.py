"""Matter export (issue 29, item 3): the zip holds the matter's file with a manifest of every
file's SHA-256, `casefile export verify` checks it (and finds a tampered file or audit entry),
access is the API's, and an export is in the audit trail and emits `export.completed`."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import httpx

from tests.exports.conftest import MEMO, MEMO_REVISED, download, members, rewrite, run_export, verify
from tests.support.assertions import api_error, ok
from tests.support.factories import new_case
from tests.support.servers import Api
from tests.support.waiting import wait_until


def test_the_zip_holds_the_matter_and_verifies(
    api: Api, admin: httpx.Client, matter: dict[str, Any], tmp_path: Path
) -> None:
    case_id = matter["case"]["id"]
    export = run_export(admin, case_id)
    assert export["status"] == "succeeded", export
    assert export["files_done"] == export["total_files"] > 8
    path = download(admin, export, tmp_path / "export.zip")
    assert hashlib.sha256(path.read_bytes()).hexdigest() == export["sha256"]
    files = members(path)
    manifest = json.loads(files["manifest.json"])
    assert manifest["case"]["id"] == case_id and manifest["omitted"] == []
    listed = {f["path"]: f for f in manifest["files"]}
    assert set(listed) == set(files) - {"manifest.json"}
    for name, item in listed.items():
        assert item["sha256"] == hashlib.sha256(files[name]).hexdigest() and item["size"] == len(files[name])

    document = matter["document"]
    # Every version of the document, each under its number.
    doc_paths = sorted(name for name in files if name.startswith(f"documents/{document['id']}/"))
    assert doc_paths == [
        f"documents/{document['id']}/v1/lease memo.txt",
        f"documents/{document['id']}/v2/lease memo v2.txt",
    ]
    assert [files[path] for path in doc_paths] == [MEMO, MEMO_REVISED]
    listed_docs = json.loads(files["documents.json"])
    assert [(d["id"], d["version"], d["path"]) for d in listed_docs] == [
        (document["id"], 1, doc_paths[0]),
        (document["id"], 2, doc_paths[1]),
    ]
    doc_path = doc_paths[0]
    (note,) = json.loads(files["notes.json"])
    assert note["body"] == "Second version"
    assert [v["body"] for v in note["history"]] == ["First <b>version</b>", "Second version"]
    tasks = {t["title"] for t in json.loads(files["tasks.json"])}
    assert "Prepare the bundle" in tasks and len(tasks) > 1  # the deadlines' tasks too
    (deadline,) = json.loads(files["deadlines.json"])
    computed = deadline["calculation"]["deadlines"]
    assert computed and all(c["trace"] and c["task_id"] for c in computed)
    (party,) = [p for p in json.loads(files["parties.json"]) if p["id"] == matter["party"]["id"]]
    assert party["contact"]["name"] == matter["contact"]["name"] and party["role"] == "witness"

    page = files["index.html"].decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>" not in page
    assert f'href="{doc_path}"' in page and "Second version" in page

    entries = [json.loads(line) for line in files["audit/entries.jsonl"].splitlines()]
    actions = [e["entry"]["action"] for e in entries]
    assert {"case.created", "document.uploaded", "note.updated", "export.requested"} <= set(actions)
    assert all(e["entry"]["case_id"] == case_id for e in entries)
    head = json.loads(files["audit/tree_head.json"])
    assert head == {
        **ok(admin.get(f"/audit/tree-heads/{head['tree_size']}")),
        "public_key": head["public_key"],
    }

    code, output = verify(path)
    assert code == 0, output
    assert f"{len(listed)} files match the manifest" in output and f"{len(entries)} audit entries" in output
    assert verify(path, "--key-id", head["key_id"])[0] == 0
    code, output = verify(path, "--key-id", "0" * 64)
    assert code == 1 and "not the expected" in output


def test_verify_finds_a_tampered_file(admin: httpx.Client, matter: dict[str, Any], tmp_path: Path) -> None:
    export = run_export(admin, matter["case"]["id"])
    path = download(admin, export, tmp_path / "export.zip")
    files = members(path)
    doc_path = next(name for name in files if name.startswith("documents/"))
    tampered = rewrite(path, tmp_path / "tampered.zip", {doc_path: MEMO.replace(b"2031", b"2041")})
    code, output = verify(tampered)
    assert code == 1 and f"{doc_path}: its SHA-256 is" in output
    extra = tmp_path / "extra.zip"
    rewrite(path, extra, {})
    import zipfile

    with zipfile.ZipFile(extra, "a") as archive:
        archive.writestr("documents/slipped-in.txt", b"not ours")
    code, output = verify(extra)
    assert code == 1 and "documents/slipped-in.txt: in the zip but not in the manifest" in output


def _with_manifest_fixed(files: dict[str, bytes], name: str, data: bytes) -> dict[str, bytes]:
    manifest = json.loads(files["manifest.json"])
    for item in manifest["files"]:
        if item["path"] == name:
            item["sha256"], item["size"] = hashlib.sha256(data).hexdigest(), len(data)
    return {name: data, "manifest.json": json.dumps(manifest).encode()}


def test_verify_finds_a_tampered_audit_entry(
    admin: httpx.Client, matter: dict[str, Any], tmp_path: Path
) -> None:
    export = run_export(admin, matter["case"]["id"])
    path = download(admin, export, tmp_path / "export.zip")
    files = members(path)
    lines = [json.loads(line) for line in files["audit/entries.jsonl"].splitlines()]
    victim = next(i for i, line in enumerate(lines) if line["entry"]["action"] == "document.uploaded")

    def tampered(edit: Any, name: str) -> Path:
        changed = [dict(line, entry=dict(line["entry"])) for line in lines]
        edit(changed[victim]["entry"])
        data = b"".join(json.dumps(line).encode() + b"\n" for line in changed)
        return rewrite(path, tmp_path / name, _with_manifest_fixed(files, "audit/entries.jsonl", data))

    # Edited, manifest fixed: the entry no longer hashes to its hash.
    edited = tampered(lambda e: e.update(actor_id="usr_someone_else"), "edited.zip")
    code, output = verify(edited)
    assert code == 1 and "the entry was edited" in output and lines[victim]["entry"]["id"] in output

    # Edited and its hash recomputed: the proof no longer reaches the signed root.
    from casefile.audit.hashing import content_hash

    def rehashed(entry: dict[str, Any]) -> None:
        entry["actor_id"] = "usr_someone_else"
        entry["hash"] = content_hash(entry)

    code, output = verify(tampered(rehashed, "rehashed.zip"))
    assert code == 1 and "does not lead to the signed root" in output

    # An entry dropped: the count no longer matches the manifest's.
    dropped = b"".join(json.dumps(line).encode() + b"\n" for i, line in enumerate(lines) if i != victim)
    code, output = verify(
        rewrite(path, tmp_path / "dropped.zip", _with_manifest_fixed(files, "audit/entries.jsonl", dropped))
    )
    assert code == 1 and "entries" in output


def test_an_export_is_audited_and_announced(api: Api, admin: httpx.Client, tmp_path: Path) -> None:
    case_id = new_case(admin)["id"]
    export = run_export(admin, case_id)
    (event,) = api.events("export.completed", case_id=case_id)
    assert event["export_id"] == export["id"] and event["sha256"] == export["sha256"]
    assert event["size_bytes"] == export["size"] and event["documents"] == 0
    download(admin, export, tmp_path / "export.zip")
    trail = ok(admin.get(f"/cases/{case_id}/audit", params={"limit": 100}))
    actions = {e["action"]: e for e in trail}
    assert {"export.requested", "export.completed", "export.downloaded"} <= set(actions)
    assert actions["export.requested"]["resource_id"] == export["id"]
    catalogue = {t["name"]: t for t in ok(admin.get("/webhook-event-types"))}
    assert set(catalogue["export.completed"]["data_schema"]["properties"]) >= {
        "export_id",
        "sha256",
        "case_id",
    }


def test_access_decides_what_may_be_exported(api: Api, admin: httpx.Client, matter: dict[str, Any]) -> None:
    case_id = matter["case"]["id"]
    walled, walled_token = api.make_user("attorney")
    outsider, outsider_token = api.make_user("attorney")
    ok(
        admin.put(
            f"/cases/{case_id}/access",
            json={
                "access": "restricted",
                "grants": [{"subject_type": "user", "subject_id": outsider["id"], "level": "read"}],
                "walls": [{"subject_type": "user", "subject_id": walled["id"], "reason": "other side"}],
            },
        )
    )
    with api.client(token=walled_token) as client:
        api_error(client.post(f"/cases/{case_id}/exports"), 404, "NOT_FOUND")
    other_case = new_case(admin)["id"]
    limited = api.make_key(["*:*"], case_ids=[other_case])
    with api.client(api_key=limited["key"]) as client:
        api_error(client.post(f"/cases/{case_id}/exports"), 404, "NOT_FOUND")

    # Read on the matter: an export without the trail (manage) and with what the caller may read.
    reader_key = api.make_key(["read:cases"], case_ids=[case_id])
    with api.client(api_key=reader_key["key"]) as client:
        export = run_export(client, case_id)
        assert export["status"] == "succeeded", export
        omitted = {o["section"] for o in export["summary"]["omitted"]}
        assert omitted == {"documents", "contacts"} | (
            {"audit"} if export["summary"]["audit"] is None else set()
        )
        assert export["summary"]["counts"]["documents"] == 0
        # Someone else's export is not found, even by a reader of the matter.
        with api.client(token=outsider_token) as other:
            api_error(other.get(f"/exports/{export['id']}"), 404, "NOT_FOUND")
            api_error(other.get(f"/exports/{export['id']}/content"), 404, "NOT_FOUND")
    # Walled off after the export: its requester no longer gets it either.
    ok(
        admin.put(
            f"/cases/{case_id}/access",
            json={
                "access": "restricted",
                "grants": [{"subject_type": "user", "subject_id": outsider["id"], "level": "read"}],
                "walls": [{"subject_type": "user", "subject_id": outsider["id"], "reason": "conflict"}],
            },
        )
    )
    with api.client(token=outsider_token) as other:
        api_error(other.post(f"/cases/{case_id}/exports"), 404, "NOT_FOUND")


def test_content_waits_for_success(admin: httpx.Client) -> None:
    case_id = new_case(admin)["id"]
    r = admin.post(f"/cases/{case_id}/exports")
    job = r.json()["data"]
    early = admin.get(f"/exports/{job['id']}/content")
    assert early.status_code in (200, 409)  # 409 while it runs; a fast worker may be done already
    if early.status_code == 409:
        assert early.json()["error"]["code"] == "CONFLICT"
    api_error(admin.get("/exports/exp_does_not_exist"), 404, "NOT_FOUND")


def test_a_purge_takes_the_matters_exports(api: Api, admin: httpx.Client, matter: dict[str, Any]) -> None:
    case_id = matter["case"]["id"]
    export = run_export(admin, case_id)
    stored = api.settings.content_dir / export["sha256"][:2] / export["sha256"][2:4] / export["sha256"]
    assert stored.is_file()
    ok(admin.delete(f"/cases/{case_id}"))
    ok(admin.delete(f"/admin/trash/{case_id}"))
    assert api.sql("SELECT count(*) FROM export_jobs WHERE case_id = :case_id", case_id=case_id) == [(0,)]
    wait_until(lambda: not stored.exists(), timeout=15)
    api_error(admin.get(f"/exports/{export['id']}"), 404, "NOT_FOUND")
