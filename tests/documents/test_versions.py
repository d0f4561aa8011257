"""Document versions (issue 29 item 1): POST/GET /documents/{id}/versions, each version's content
with its own ETag, Range and HEAD, identical content stored once, `document.updated` with the
version number, legal holds, access, and the audit trail. Both databases, local files."""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

import httpx
import pytest

from tests.documents.samples import EXE, PDF, Storage
from tests.support.assertions import api_error, ok
from tests.support.factories import new_case, upload
from tests.support.servers import Api


def add_version(
    client: httpx.Client, document_id: str, content: bytes, name: str = "memo-v2.txt", **form: Any
) -> httpx.Response:
    return client.post(
        f"/documents/{document_id}/versions", data=form, files={"file": (name, content, "text/plain")}
    )


def text(label: str) -> bytes:
    return f"{label} {secrets.token_hex(8)}\nThe parties agree to the revised terms.\n".encode()


def sha(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def test_a_new_version_becomes_the_documents_content_and_the_old_one_stays_readable(
    api: Api, admin: httpx.Client, storage: Storage
) -> None:
    case = new_case(admin)
    first, second = text("first"), text("second")
    doc = ok(upload(admin, case["id"], first, title="Supply contract"), 201)
    assert doc["version"] == 1

    updated = ok(add_version(admin, doc["id"], second, "contract-redline.txt"), 201)
    assert updated["id"] == doc["id"] and updated["version"] == 2
    assert updated["sha256"] == sha(second) and updated["file_size"] == len(second)
    assert updated["file_name"] == "contract-redline.txt" and updated["title"] == "Supply contract"
    assert ok(admin.get(f"/documents/{doc['id']}"))["version"] == 2

    current = admin.get(f"/documents/{doc['id']}/content")
    assert current.content == second and current.headers["etag"] == f'"{sha(second)}"'
    old = admin.get(f"/documents/{doc['id']}/versions/1/content")
    assert old.status_code == 200 and old.content == first
    assert old.headers["etag"] == f'"{sha(first)}"' and old.headers["content-type"].startswith("text/plain")
    assert 'filename="memo.txt"' in old.headers["content-disposition"]
    assert storage.content_of(sha(first)) == first
    assert storage.content_of(sha(second)) == second

    versions = ok(admin.get(f"/documents/{doc['id']}/versions"))
    assert [(v["version"], v["sha256"], v["file_name"]) for v in versions] == [
        (1, sha(first), "memo.txt"),
        (2, sha(second), "contract-redline.txt"),
    ]
    one = ok(admin.get(f"/documents/{doc['id']}/versions/1"))
    assert one == versions[0] and one["document_id"] == doc["id"] and one["file_size"] == len(first)
    api_error(admin.get(f"/documents/{doc['id']}/versions/3"), 404, "NOT_FOUND")
    api_error(admin.get(f"/documents/{doc['id']}/versions/3/content"), 404, "NOT_FOUND")

    [event] = api.events("document.updated", document_id=doc["id"])
    assert event["version"] == 2 and event["case_id"] == case["id"]
    assert event["changes"]["version"] == {"from": 1, "to": 2}
    assert event["changes"]["sha256"] == {"from": sha(first), "to": sha(second)}
    assert event["changes"]["file_name"] == {"from": "memo.txt", "to": "contract-redline.txt"}


def test_version_content_has_range_etag_and_head(admin: httpx.Client) -> None:
    case = new_case(admin)
    first = text("ranged")
    doc = ok(upload(admin, case["id"], first), 201)
    ok(add_version(admin, doc["id"], text("later")), 201)
    url = f"/documents/{doc['id']}/versions/1/content"

    part = admin.get(url, headers={"Range": "bytes=0-5"})
    assert part.status_code == 206 and part.content == first[:6]
    assert part.headers["content-range"] == f"bytes 0-5/{len(first)}"
    api_error(admin.get(url, headers={"Range": f"bytes={len(first)}-"}), 416, "RANGE_NOT_SATISFIABLE")
    assert admin.get(url, headers={"If-None-Match": f'"{sha(first)}"'}).status_code == 304
    head = admin.head(url)
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-length"] == str(len(first)) and head.headers["etag"] == f'"{sha(first)}"'


def test_identical_content_is_stored_once(api: Api, admin: httpx.Client, storage: Storage) -> None:
    case = new_case(admin)
    content = text("same")
    doc = ok(upload(admin, case["id"], content), 201)
    documents, blobs, files = storage.snapshot()
    again = ok(add_version(admin, doc["id"], content, "memo.txt"), 201)
    assert again["version"] == 2 and again["sha256"] == doc["sha256"]
    assert storage.snapshot() == (documents, blobs, files)
    rows = api.sql("SELECT count(*) FROM document_versions WHERE sha256 = :s", s=sha(content))
    assert rows == [(2,)]
    # Changed nothing but the version: the event says so.
    [event] = api.events("document.updated", document_id=doc["id"])
    assert event["changes"] == {"version": {"from": 1, "to": 2}}


def test_versions_are_paged_by_cursor_without_a_cap(admin: httpx.Client) -> None:
    case = new_case(admin)
    doc = ok(upload(admin, case["id"], text("v1")), 201)
    for n in range(2, 8):
        assert ok(add_version(admin, doc["id"], text(f"v{n}")), 201)["version"] == n
    seen: list[int] = []
    params: dict[str, Any] = {"limit": 2}
    while True:
        r = admin.get(f"/documents/{doc['id']}/versions", params=params)
        seen += [v["version"] for v in ok(r)]
        cursor = r.json()["meta"]["pagination"].get("next_cursor")
        if not cursor:
            break
        params = {"limit": 2, "cursor": cursor}
    assert seen == list(range(1, 8))
    newest = ok(admin.get(f"/documents/{doc['id']}/versions", params={"order": "desc", "limit": 1}))
    assert newest[0]["version"] == 7


def test_a_version_upload_has_the_limits_and_sniffing_of_an_upload(
    api: Api, admin: httpx.Client, storage: Storage
) -> None:
    case = new_case(admin)
    doc = ok(upload(admin, case["id"], text("limits")), 201)
    before = storage.snapshot()
    api_error(add_version(admin, doc["id"], EXE, "setup.exe"), 415, "UNSUPPORTED_MEDIA_TYPE")
    api_error(add_version(admin, doc["id"], b"", "empty.txt"), 422, "VALIDATION_ERROR")
    api_error(add_version(admin, doc["id"], text("x"), title="no"), 422, "VALIDATION_ERROR")
    api_error(admin.post(f"/documents/{doc['id']}/versions", data={"a": "b"}), 422, "VALIDATION_ERROR")
    api_error(admin.post(f"/documents/{doc['id']}/versions", json={}), 415, "UNSUPPORTED_MEDIA_TYPE")
    assert storage.snapshot() == before and storage.temp_files() == []
    assert ok(admin.get(f"/documents/{doc['id']}"))["version"] == 1
    # The type comes from the bytes, not the name.
    pdf = ok(add_version(admin, doc["id"], PDF, "looks-like.txt"), 201)
    assert pdf["file_type"] == "application/pdf" and pdf["version"] == 2


def test_too_large_a_version_is_refused(api: Api, admin: httpx.Client, storage: Storage) -> None:
    case = new_case(admin)
    doc = ok(upload(admin, case["id"], text("small")), 201)
    config = ok(admin.get("/admin/config"))
    limit = 4096
    ok(admin.patch("/admin/config", json={"uploads": {"max_size_bytes": limit}}))
    try:
        before = storage.snapshot()
        api_error(add_version(admin, doc["id"], b"a" * (limit + 1)), 413, "PAYLOAD_TOO_LARGE")
        assert storage.snapshot() == before and storage.temp_files() == []
    finally:
        previous = config["uploads"]["max_size_bytes"]
        ok(admin.patch("/admin/config", json={"uploads": {"max_size_bytes": previous}}))


def test_a_legal_hold_freezes_the_versions(api: Api, admin: httpx.Client) -> None:
    case = new_case(admin)
    doc = ok(upload(admin, case["id"], text("held")), 201)
    hold = ok(admin.post(f"/cases/{case['id']}/holds", json={"reason": "Litigation expected"}), 201)
    api_error(add_version(admin, doc["id"], text("refused")), 409, "LEGAL_HOLD")
    api_error(admin.delete(f"/documents/{doc['id']}"), 409, "LEGAL_HOLD")
    assert len(ok(admin.get(f"/documents/{doc['id']}/versions"))) == 1
    assert api.events("document.updated", document_id=doc["id"]) == []
    ok(admin.post(f"/holds/{hold['id']}/release", json={"reason": "Settled"}))
    assert ok(add_version(admin, doc["id"], text("after")), 201)["version"] == 2


def test_versions_follow_the_documents_access(api: Api, admin: httpx.Client) -> None:
    case = new_case(admin)
    doc = ok(upload(admin, case["id"], text("private")), 201)
    reader = api.make_key(["read:documents"])
    with api.client(api_key=reader["key"]) as c:
        assert len(ok(c.get(f"/documents/{doc['id']}/versions"))) == 1
        assert c.get(f"/documents/{doc['id']}/versions/1/content").status_code == 200
        r = add_version(c, doc["id"], text("not allowed"))
        assert r.status_code == 403, r.text
    ok(admin.put(f"/cases/{case['id']}/access", json={"access": "restricted"}))
    _, token = api.make_user("attorney")
    with api.client(token=token) as c:
        api_error(c.get(f"/documents/{doc['id']}/versions"), 404, "NOT_FOUND")
        api_error(c.get(f"/documents/{doc['id']}/versions/1/content"), 404, "NOT_FOUND")
        api_error(add_version(c, doc["id"], text("walled")), 404, "NOT_FOUND")
    ok(admin.delete(f"/documents/{doc['id']}"))
    api_error(admin.get(f"/documents/{doc['id']}/versions"), 404, "NOT_FOUND")
    api_error(add_version(admin, doc["id"], text("trashed")), 404, "NOT_FOUND")


def test_each_versions_upload_and_download_is_in_the_audit_trail(api: Api, admin: httpx.Client) -> None:
    case = new_case(admin)
    doc = ok(upload(admin, case["id"], text("audited")), 201)
    second = text("audited v2")
    ok(add_version(admin, doc["id"], second), 201)
    assert admin.get(f"/documents/{doc['id']}/versions/1/content").status_code == 200
    assert admin.get(f"/documents/{doc['id']}/content").status_code == 200
    entries = ok(admin.get(f"/cases/{case['id']}/audit", params={"limit": 100}))
    mine = [e for e in entries if e["resource_id"] == doc["id"]]
    updated = [e for e in mine if e["action"] == "document.updated"]
    assert [e["details"]["data"]["version"] for e in updated] == [2]
    assert updated[0]["details"]["data"]["changed_fields"] == ["file_name", "file_size", "sha256", "version"]
    downloads = sorted(e["details"]["version"] for e in mine if e["action"] == "document.download")
    assert downloads == [1, 2]
    uploaded = [e for e in mine if e["action"] == "document.uploaded"]
    assert len(uploaded) == 1
    # An entry never holds the document's words or its content's hash (decision 0028).
    assert "title" not in uploaded[0]["details"]["data"] and sha(second) not in str(updated[0]["details"])


@pytest.mark.parametrize("number", ["0", "-1", "x", str(2**31)])
def test_a_version_number_is_a_positive_integer(admin: httpx.Client, number: str) -> None:
    case = new_case(admin)
    doc = ok(upload(admin, case["id"], text("numbers")), 201)
    api_error(admin.get(f"/documents/{doc['id']}/versions/{number}"), 422, "VALIDATION_ERROR")
