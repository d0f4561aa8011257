"""Helpers of the export tests: a matter with something of every kind, and an export run to the end."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from casefile.cli import main
from tests.support.assertions import ok
from tests.support.factories import new_case, unique, upload
from tests.support.waiting import wait_until

MEMO = b"The lease runs to 2031; rent reviews every five years.\n"
MEMO_REVISED = b"The lease runs to 2033; rent reviews every three years.\n"


def full_matter(admin: httpx.Client) -> dict[str, Any]:
    """A matter with a document, an edited note, a task, saved deadlines and a party."""
    case = new_case(admin, title=f"<script>alert(1)</script> Lease {unique('m')}")
    case_id = case["id"]
    document = ok(upload(admin, case_id, MEMO, name="lease memo.txt"), 201)
    revised = {"file": ("lease memo v2.txt", MEMO_REVISED, "text/plain")}
    ok(admin.post(f"/documents/{document['id']}/versions", files=revised), 201)
    note = ok(admin.post(f"/cases/{case_id}/notes", json={"body": "First <b>version</b>"}), 201)
    ok(admin.patch(f"/notes/{note['id']}", json={"body": "Second version"}))
    task = ok(admin.post(f"/cases/{case_id}/tasks", json={"title": "Prepare the bundle"}), 201)
    contact = ok(admin.post("/contacts", json={"name": unique("Witness "), "kind": "person"}), 201)
    party = ok(
        admin.post(f"/cases/{case_id}/parties", json={"contact_id": contact["id"], "role": "witness"}), 201
    )
    ok(
        admin.post(
            f"/cases/{case_id}/deadlines/compute",
            json={"rule_set": "frcp", "trigger": "service", "trigger_date": "2026-12-02", "save": True},
        )
    )
    return {
        "case": case,
        "document": document,
        "note": note,
        "task": task,
        "contact": contact,
        "party": party,
    }


def run_export(client: httpx.Client, case_id: str) -> dict[str, Any]:
    r = client.post(f"/cases/{case_id}/exports")
    assert r.status_code == 202, r.text
    job = r.json()["data"]
    assert r.headers["Location"].endswith(f"/exports/{job['id']}")

    def finished() -> dict[str, Any] | None:
        now = ok(client.get(f"/exports/{job['id']}"))
        return now if now["status"] in ("succeeded", "failed") else None

    return dict(wait_until(finished, timeout=90, interval=0.2))


def download(client: httpx.Client, export: dict[str, Any], target: Path) -> Path:
    r = client.get(f"/exports/{export['id']}/content")
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/zip"
    assert r.headers["etag"] == f'"{export["sha256"]}"'
    assert int(r.headers["content-length"]) == export["size"] == len(r.content)
    target.write_bytes(r.content)
    return target


def verify(path: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["export", "verify", str(path), *args])
    return result.exit_code, result.output


def rewrite(source: Path, target: Path, changes: dict[str, bytes]) -> Path:
    """A copy of the zip with some members' bytes replaced."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for info in old.infolist():
            new.writestr(info, changes.get(info.filename, old.read(info.filename)))
    return target


def members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(path.read_bytes())) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


@pytest.fixture
def matter(admin: httpx.Client) -> dict[str, Any]:
    return full_matter(admin)
