"""Trash, retention and legal holds (docs/api-conventions.md#trash, #legal-holds): a deleted case or
document is gone from every read, list, count and search until an administrator restores it, and
purged for good (rows and content) by hand or after `retention.trash_days`; a legal hold stops
deleting and purging for everyone, administrators and `delete:*` keys included."""

from __future__ import annotations

import asyncio
import secrets
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from casefile.startup import start_runtime
from casefile.trash.service import purge_expired
from tests.support.assertions import api_error, auth_error, ok
from tests.support.factories import new_case, upload
from tests.support.servers import Api


def content_path(api: Api, sha256: str) -> Path:
    return api.settings.content_dir / sha256[:2] / sha256[2:4] / sha256


def trash(admin: httpx.Client, **params: Any) -> dict[str, dict[str, Any]]:
    return {item["id"]: item for item in ok(admin.get("/admin/trash", params={"limit": 100, **params}))}


def parse(timestamp: str) -> datetime:
    return datetime.fromisoformat(timestamp.replace("Z", "+00:00"))


def age(api: Api, table: str, row_id: str, days: int) -> None:
    """Move a trashed row's `deleted_at` `days` into the past, as if deleted then."""
    if api.settings.is_sqlite:
        shifted = f"strftime('%Y-%m-%d %H:%M:%f000', deleted_at, '-{days} days')"
    else:
        shifted = f"deleted_at - interval '{days} days'"
    api.sql(f"UPDATE {table} SET deleted_at = {shifted} WHERE id = :id", id=row_id)


def sweep(api: Api) -> int:
    """One retention sweep, the one the background worker (casefile.trash.worker) runs at each
    interval, on the server's database, awaited to its end: what it left in the trash is what it
    decided to keep, not what it had no time for. Returns how many items it purged."""

    async def run() -> int:
        runtime = start_runtime(api.settings)
        try:
            return await purge_expired(runtime)
        finally:
            await runtime.close()

    return asyncio.run(run())


def admin_id(api: Api) -> str:
    return str(api.login()["user"]["id"])


def test_a_trashed_case_is_gone_everywhere_and_restores_with_its_documents(
    api: Api, admin: httpx.Client
) -> None:
    word = f"trashy{secrets.token_hex(3)}"
    case = new_case(admin, title=f"In re {word}")
    kept = ok(upload(admin, case["id"], f"kept {word}".encode(), title=f"Kept {word}"), 201)
    alone = ok(upload(admin, case["id"], f"alone {word}".encode(), title=f"Alone {word}"), 201)
    ok(admin.delete(f"/documents/{alone['id']}"))  # in the trash on its own, before the case
    listed = admin.get("/cases", params={"search": word})
    assert [c["id"] for c in ok(listed)] == [case["id"]]

    assert ok(admin.delete(f"/cases/{case['id']}")) == {"id": case["id"], "deleted": True}
    api_error(admin.get(f"/cases/{case['id']}"), 404, "NOT_FOUND")
    listed = admin.get("/cases", params={"search": word})
    assert ok(listed) == [] and listed.json()["meta"]["pagination"]["total"] == 0
    assert case["id"] not in {c["id"] for c in ok(admin.get("/cases", params={"limit": 100}))}
    found = admin.get("/search", params={"q": word})
    assert ok(found) == [] and found.json()["meta"]["pagination"]["total"] == 0
    api_error(admin.get(f"/cases/{case['id']}/documents"), 404, "NOT_FOUND")
    api_error(admin.get(f"/documents/{kept['id']}"), 404, "NOT_FOUND")
    api_error(admin.get(f"/documents/{kept['id']}/content"), 404, "NOT_FOUND")
    api_error(admin.patch(f"/cases/{case['id']}", json={"priority": "low"}), 404, "NOT_FOUND")
    api_error(upload(admin, case["id"]), 404, "NOT_FOUND")
    api_error(admin.post(f"/cases/{case['id']}/ask", json={"question": "What?"}), 404, "NOT_FOUND")
    api_error(admin.post(f"/cases/{case['id']}/holds", json={"reason": "late"}), 404, "NOT_FOUND")
    assert content_path(api, kept["sha256"]).exists()  # content kept until the purge
    [event] = api.events("case.deleted", case_id=case["id"])
    assert event["deleted_by"] == admin_id(api)

    items = trash(admin)
    item = items[case["id"]]
    assert item["resource_type"] == "case" and item["case_id"] == case["id"]
    assert item["deleted_by"] == admin_id(api)
    assert parse(item["purge_after"]) - parse(item["deleted_at"]) == timedelta(days=30)
    assert kept["id"] not in items  # deleted with the case: one item with it
    assert items[alone["id"]]["resource_type"] == "document"
    only_cases = trash(admin, resource_type="case")
    assert case["id"] in only_cases and alone["id"] not in only_cases
    api_error(admin.post(f"/admin/trash/{kept['id']}/restore"), 409, "CONFLICT")
    api_error(admin.post(f"/admin/trash/{alone['id']}/restore"), 409, "CONFLICT")  # its case first

    restored = ok(admin.post(f"/admin/trash/{case['id']}/restore"))
    assert restored["id"] == case["id"] and restored["title"] == case["title"]
    assert ok(admin.get(f"/cases/{case['id']}"))["id"] == case["id"]
    listed = admin.get("/cases", params={"search": word})
    assert [c["id"] for c in ok(listed)] == [case["id"]]
    documents = admin.get(f"/cases/{case['id']}/documents")
    assert [d["id"] for d in ok(documents)] == [kept["id"]]  # the one trashed alone stays there
    assert documents.json()["meta"]["pagination"]["total"] == 1
    assert admin.get(f"/documents/{kept['id']}/content").content == f"kept {word}".encode()
    api_error(admin.get(f"/documents/{alone['id']}"), 404, "NOT_FOUND")
    items = trash(admin)
    assert case["id"] not in items and alone["id"] in items
    [event] = api.events("case.restored", case_id=case["id"])
    assert event["document_ids"] == [kept["id"]] and event["restored_by"] == admin_id(api)
    assert api.events("document.restored", document_id=kept["id"], reason="case_restored")
    api_error(admin.post(f"/admin/trash/{case['id']}/restore"), 404, "NOT_FOUND")  # not in it now


def test_a_trashed_document_leaves_lists_and_search_and_comes_back(api: Api, admin: httpx.Client) -> None:
    word = f"paperwork{secrets.token_hex(3)}"
    case = new_case(admin)
    doc = ok(upload(admin, case["id"], b"exhibit A " + word.encode(), title=f"Exhibit {word}"), 201)
    other = ok(upload(admin, case["id"], b"exhibit B " + word.encode()), 201)
    assert doc["id"] in {h["id"] for h in ok(admin.get("/search", params={"q": word}))}

    ok(admin.delete(f"/documents/{doc['id']}"))
    documents = admin.get(f"/cases/{case['id']}/documents")
    assert [d["id"] for d in ok(documents)] == [other["id"]]
    assert documents.json()["meta"]["pagination"]["total"] == 1
    assert doc["id"] not in {h["id"] for h in ok(admin.get("/search", params={"q": word}))}
    assert admin.head(f"/documents/{doc['id']}/content").status_code == 404
    api_error(admin.get(f"/documents/{doc['id']}/content"), 404, "NOT_FOUND")
    api_error(admin.patch(f"/documents/{doc['id']}", json={"title": "x"}), 404, "NOT_FOUND")
    api_error(admin.delete(f"/documents/{doc['id']}"), 404, "NOT_FOUND")
    assert len(api.events("document.deleted", document_id=doc["id"])) == 1

    restored = ok(admin.post(f"/admin/trash/{doc['id']}/restore"))
    assert restored["id"] == doc["id"]
    assert admin.get(f"/documents/{doc['id']}/content").content == b"exhibit A " + word.encode()
    assert doc["id"] in {h["id"] for h in ok(admin.get("/search", params={"q": word}))}
    assert api.events("document.restored", document_id=doc["id"], reason="restored")


def test_only_administrators_use_the_trash(api: Api, admin: httpx.Client) -> None:
    case = new_case(admin)
    ok(admin.delete(f"/cases/{case['id']}"))
    _, token = api.make_user("attorney")
    key = api.make_key(["*:*"])["key"]
    for client in (api.client(token=token), api.client(api_key=key)):
        with client:
            auth_error(client.get("/admin/trash"), 403, "AUTH_011")
            auth_error(client.post(f"/admin/trash/{case['id']}/restore"), 403, "AUTH_011")
            auth_error(client.delete(f"/admin/trash/{case['id']}"), 403, "AUTH_011")
    api_error(admin.delete("/admin/trash/case_nope"), 404, "NOT_FOUND")
    api_error(admin.delete(f"/admin/trash/{new_case(admin)['id']}"), 404, "NOT_FOUND")  # not deleted
    api_error(admin.get("/admin/trash", params={"resource_type": "user"}), 422, "VALIDATION_ERROR")


def test_purging_a_case_removes_it_its_documents_and_their_content(api: Api, admin: httpx.Client) -> None:
    case = new_case(admin)
    docs = [ok(upload(admin, case["id"], f"purge me {i} {case['id']}".encode()), 201) for i in range(2)]
    ok(admin.delete(f"/documents/{docs[0]['id']}"))
    ok(admin.delete(f"/cases/{case['id']}"))
    assert ok(admin.delete(f"/admin/trash/{case['id']}")) == {"id": case["id"], "deleted": True}
    assert api.sql("SELECT count(*) FROM cases WHERE id = :id", id=case["id"]) == [(0,)]
    assert api.sql("SELECT count(*) FROM documents WHERE case_id = :id", id=case["id"]) == [(0,)]
    for doc in docs:
        assert not content_path(api, doc["sha256"]).exists()
        assert api.events("document.purged", document_id=doc["id"], reason="case_purged")
    [event] = api.events("case.purged", case_id=case["id"])
    assert event["reason"] == "purged" and event["purged_by"] == admin_id(api)
    assert case["id"] not in trash(admin) and docs[0]["id"] not in trash(admin)
    api_error(admin.post(f"/admin/trash/{case['id']}/restore"), 404, "NOT_FOUND")


def test_retention_purges_what_is_older_than_trash_days(api: Api, admin: httpx.Client) -> None:
    old, recent = new_case(admin), new_case(admin)
    old_doc = ok(upload(admin, old["id"], f"old {old['id']}".encode()), 201)
    lone = ok(upload(admin, recent["id"], f"lone {recent['id']}".encode()), 201)
    for case in (old, recent):
        ok(admin.delete(f"/cases/{case['id']}"))
    ok(admin.post(f"/admin/trash/{recent['id']}/restore"))
    ok(admin.delete(f"/documents/{lone['id']}"))
    age(api, "cases", old["id"], 31)
    age(api, "documents", lone["id"], 6)

    sweep(api)
    assert api.sql("SELECT count(*) FROM cases WHERE id = :id", id=old["id"]) == [(0,)]
    assert not content_path(api, old_doc["sha256"]).exists()
    assert api.events("case.purged", case_id=old["id"], reason="retention", purged_by=None)
    assert api.events("document.purged", document_id=old_doc["id"], reason="retention")
    assert lone["id"] in trash(admin)  # 6 days old: within the default 30

    ok(admin.patch("/admin/config", json={"retention": {"trash_days": 5}}))
    try:
        assert parse(trash(admin)[lone["id"]]["purge_after"]) < datetime.now(UTC)
        sweep(api)
    finally:
        ok(admin.patch("/admin/config", json={"retention": None}))
    assert lone["id"] not in trash(admin)
    assert not content_path(api, lone["sha256"]).exists()
    assert ok(admin.get(f"/cases/{recent['id']}"))["id"] == recent["id"]


def test_a_legal_hold_blocks_deleting_and_purging_for_everyone(api: Api, admin: httpx.Client) -> None:
    case = new_case(admin)
    doc = ok(upload(admin, case["id"], f"held {case['id']}".encode()), 201)
    trashed = ok(upload(admin, case["id"], f"trashed {case['id']}".encode()), 201)
    ok(admin.delete(f"/documents/{trashed['id']}"))
    hold = ok(admin.post(f"/cases/{case['id']}/holds", json={"reason": "Litigation expected"}), 201)
    assert hold["id"].startswith("hold_") and hold["case_id"] == case["id"]
    assert hold["reason"] == "Litigation expected" and hold["created_by"] == admin_id(api)
    assert hold["released_at"] is None and hold["released_by"] is None
    assert api.events("case.hold_placed", hold_id=hold["id"], case_id=case["id"])

    deleter = api.make_key(["read:*", "delete:*"])["key"]
    with api.client(api_key=deleter) as key:
        for client in (admin, key):
            api_error(client.delete(f"/cases/{case['id']}"), 409, "LEGAL_HOLD")
            api_error(client.delete(f"/documents/{doc['id']}"), 409, "LEGAL_HOLD")
    api_error(admin.delete(f"/admin/trash/{trashed['id']}"), 409, "LEGAL_HOLD")
    age(api, "documents", trashed["id"], 400)
    sweep(api)  # retention waits for the release too
    assert trashed["id"] in trash(admin) and content_path(api, trashed["sha256"]).exists()
    assert ok(admin.get(f"/cases/{case['id']}"))["id"] == case["id"]
    assert ok(admin.get(f"/documents/{doc['id']}"))["id"] == doc["id"]
    assert not api.events("case.deleted", case_id=case["id"])

    listed = admin.get(f"/cases/{case['id']}/holds")
    assert [h["id"] for h in ok(listed)] == [hold["id"]]
    _, attorney = api.make_user("attorney")
    with api.client(token=attorney) as c:
        auth_error(c.post(f"/holds/{hold['id']}/release"), 403, "AUTH_011")
    with api.client(api_key=api.make_key(["*:*"])["key"]) as c:
        auth_error(c.post(f"/holds/{hold['id']}/release"), 403, "AUTH_011")
    api_error(admin.post("/holds/hold_nope/release"), 404, "NOT_FOUND")

    released = ok(admin.post(f"/holds/{hold['id']}/release"))
    assert released["released_by"] == admin_id(api) and released["released_at"] is not None
    assert ok(admin.post(f"/holds/{hold['id']}/release")) == released  # again: nothing changes
    assert len(api.events("case.hold_released", hold_id=hold["id"])) == 1
    assert ok(admin.get(f"/cases/{case['id']}/holds"))[0]["released_at"] == released["released_at"]

    sweep(api)
    assert trashed["id"] not in trash(admin) and not content_path(api, trashed["sha256"]).exists()
    with api.client(api_key=deleter) as key:
        ok(key.delete(f"/documents/{doc['id']}"))
        ok(key.delete(f"/cases/{case['id']}"))


def test_holds_need_write_on_cases_and_a_reason(api: Api, admin: httpx.Client) -> None:
    case = new_case(admin)
    _, viewer = api.make_user("viewer")
    with api.client(token=viewer) as c:
        auth_error(c.post(f"/cases/{case['id']}/holds", json={"reason": "x"}), 403, "AUTH_010")
        assert ok(c.get(f"/cases/{case['id']}/holds")) == []
    api_error(admin.post(f"/cases/{case['id']}/holds", json={"reason": ""}), 422, "VALIDATION_ERROR")
    api_error(admin.post(f"/cases/{case['id']}/holds", json={}), 422, "VALIDATION_ERROR")
    api_error(admin.post("/cases/case_nope/holds", json={"reason": "x"}), 404, "NOT_FOUND")
    api_error(admin.get("/cases/case_nope/holds"), 404, "NOT_FOUND")


@pytest.mark.parametrize("rounds", [3])
def test_several_holds_all_need_releasing(api: Api, admin: httpx.Client, rounds: int) -> None:
    case = new_case(admin)
    holds = [
        ok(admin.post(f"/cases/{case['id']}/holds", json={"reason": f"r{i}"}), 201) for i in range(rounds)
    ]
    for hold in holds:
        api_error(admin.delete(f"/cases/{case['id']}"), 409, "LEGAL_HOLD")
        ok(admin.post(f"/holds/{hold['id']}/release"))
    ok(admin.delete(f"/cases/{case['id']}"))


def test_a_hold_and_a_deletion_at_once_never_both_succeed(api: Api, admin: httpx.Client) -> None:
    token = api.admin_token

    def place(case_id: str) -> int:
        with api.client(token=token) as c:
            return c.post(f"/cases/{case_id}/holds", json={"reason": "race"}).status_code

    def delete(path: str) -> int:
        with api.client(token=token) as c:
            return c.delete(path).status_code

    for _ in range(10):
        case = new_case(admin)
        doc = ok(upload(admin, case["id"], f"race {case['id']}".encode()), 201)
        with ThreadPoolExecutor(3) as pool:
            held = pool.submit(place, case["id"])
            doc_deleted = pool.submit(delete, f"/documents/{doc['id']}")
            case_deleted = pool.submit(delete, f"/cases/{case['id']}")
        # Either the hold came first (both deletions refused) or the case went first (no hold).
        if held.result() == 201:
            assert case_deleted.result() == 409
            assert doc_deleted.result() in (200, 409)  # the document may have gone before the hold
            assert ok(admin.get(f"/cases/{case['id']}"))["id"] == case["id"]
        else:
            assert (held.result(), case_deleted.result()) == (404, 200)
