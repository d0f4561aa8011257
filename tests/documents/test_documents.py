"""Documents after upload: downloads and ranges, names, metadata, trash, lists, permissions."""

from __future__ import annotations

import httpx

from tests.documents.samples import PDF
from tests.support import plain
from tests.support.assertions import api_error, auth_error, details, ok
from tests.support.factories import TEXT, new_case, upload
from tests.support.servers import Api


def test_download_headers_etag_and_ranges(admin: httpx.Client, case) -> None:
    doc = ok(upload(admin, case["id"], TEXT), 201)
    url = f"/documents/{doc['id']}/content"
    full = admin.get(url)
    assert full.status_code == 200 and full.content == TEXT
    assert full.headers["content-type"].startswith("text/plain")
    assert full.headers["etag"] == f'"{doc["sha256"]}"'
    assert full.headers["content-length"] == str(len(TEXT)) and full.headers["accept-ranges"] == "bytes"
    assert (
        full.headers["content-disposition"] == "attachment; filename=\"memo.txt\"; filename*=UTF-8''memo.txt"
    )
    unchanged = admin.get(url, headers={"If-None-Match": full.headers["etag"]})
    assert unchanged.status_code == 304 and unchanged.content == b""
    assert admin.get(url, headers={"If-None-Match": '"other"'}).status_code == 200
    part = admin.get(url, headers={"Range": "bytes=2-5"})
    assert part.status_code == 206 and part.content == TEXT[2:6]
    assert part.headers["content-range"] == f"bytes 2-5/{len(TEXT)}"
    assert admin.get(url, headers={"Range": "bytes=-4"}).content == TEXT[-4:]
    assert admin.get(url, headers={"Range": "bytes=10-"}).content == TEXT[10:]
    assert admin.get(url, headers={"Range": "bytes=0-1,4-5"}).content == TEXT  # several ranges: all of it
    r = admin.get(url, headers={"Range": f"bytes={len(TEXT)}-"})
    api_error(r, 416, "RANGE_NOT_SATISFIABLE")
    assert r.headers["content-range"] == f"bytes */{len(TEXT)}"


def test_file_names_are_sanitized(admin: httpx.Client, case) -> None:
    raw_name = b'..\\..\\etc\\pass:wd*\t"x".txt'  # as a client could send it, unescaped
    body = (
        b'--B\r\nContent-Disposition: form-data; name="file"; filename="'
        + raw_name
        + b'"\r\n\r\n'
        + TEXT
        + b"\r\n--B--\r\n"
    )
    r = admin.post(
        f"/cases/{case['id']}/documents",
        content=body,
        headers={"Content-Type": "multipart/form-data; boundary=B"},
    )
    doc = ok(r, 201)
    assert "/" not in doc["file_name"] and "\\" not in doc["file_name"] and "\t" not in doc["file_name"]
    assert doc["file_name"].endswith(".txt") and doc["file_name"].startswith("pass_wd_")
    r = admin.get(f"/documents/{doc['id']}/content")
    disposition = r.headers["content-disposition"]
    assert disposition.count('"') == 2 and "\\" not in disposition and "/" not in disposition
    german = ok(upload(admin, case["id"], TEXT, "Schriftsatz Müller.txt"), 201)
    r = admin.get(f"/documents/{german['id']}/content")
    assert r.headers["content-disposition"] == (
        "attachment; filename=\"Schriftsatz M_ller.txt\"; filename*=UTF-8''Schriftsatz%20M%C3%BCller.txt"
    )


def test_update_metadata(api: Api, admin: httpx.Client, case) -> None:
    doc = ok(upload(admin, case["id"], document_type="memo"), 201)
    upd = ok(admin.patch(f"/documents/{doc['id']}", json={"title": "Renamed", "tags": ["x", " x ", "y"]}))
    assert upd["title"] == "Renamed" and upd["tags"] == ["x", "y"] and upd["document_type"] == "memo"
    upd = ok(admin.put(f"/documents/{doc['id']}", json={"description": "Now described"}))
    assert upd["title"] == "Renamed" and upd["description"] == "Now described"
    ok(admin.put(f"/documents/{doc['id']}", json={"description": "Now described"}))  # no-op
    changes = [e["changes"] for e in api.events("document.updated", document_id=doc["id"])]
    assert changes == [
        {"title": {"from": doc["title"], "to": "Renamed"}, "tags": {"from": doc["tags"], "to": ["x", "y"]}},
        {"description": {"from": doc["description"], "to": "Now described"}},
    ]
    r = admin.patch(f"/documents/{doc['id']}", json={"title": ""})
    assert details(api_error(r, 422, "VALIDATION_ERROR")) == {"title": "Title is required"}
    api_error(admin.patch(f"/documents/{doc['id']}", json={"file_size": 1}), 422, "VALIDATION_ERROR")
    api_error(admin.patch("/documents/doc_nope", json={"title": "x"}), 404, "NOT_FOUND")


def test_delete_trashes_then_purge_removes_row_content_and_emits(
    api: Api, admin: httpx.Client, case, storage
) -> None:
    doc = ok(upload(admin, case["id"], b"to be deleted " + case["id"].encode()), 201)
    assert ok(admin.delete(f"/documents/{doc['id']}")) == {"id": doc["id"], "deleted": True}
    api_error(admin.get(f"/documents/{doc['id']}"), 404, "NOT_FOUND")
    api_error(admin.get(f"/documents/{doc['id']}/content"), 404, "NOT_FOUND")
    [event] = api.events("document.deleted", document_id=doc["id"])
    assert event["reason"] == "deleted" and event["case_id"] == case["id"]
    assert storage.has(doc["sha256"])  # in the trash until purged
    ok(admin.delete(f"/admin/trash/{doc['id']}"))
    assert not storage.has(doc["sha256"])
    assert api.sql("SELECT count(*) FROM documents WHERE id = :id", id=doc["id"])[0][0] == 0
    assert api.events("document.purged", document_id=doc["id"], reason="purged")


def test_deleting_a_case_trashes_its_documents_and_purging_removes_content(
    api: Api, admin: httpx.Client, storage
) -> None:
    case = new_case(admin)
    docs = [ok(upload(admin, case["id"], f"exhibit {i} {case['id']}".encode()), 201) for i in range(3)]
    ok(admin.delete(f"/cases/{case['id']}"))
    for doc in docs:
        api_error(admin.get(f"/documents/{doc['id']}"), 404, "NOT_FOUND")
        assert storage.has(doc["sha256"])
        assert api.events("document.deleted", document_id=doc["id"], reason="case_deleted")
    ok(admin.delete(f"/admin/trash/{case['id']}"))
    for doc in docs:
        assert not storage.has(doc["sha256"])
        assert api.events("document.purged", document_id=doc["id"], reason="case_purged")
    assert api.events("case.purged", case_id=case["id"], reason="purged")


def test_document_listing(admin: httpx.Client) -> None:
    case = new_case(admin)
    for i, (title, kind, size) in enumerate(
        [("beta brief", "brief", 30), ("Alpha memo", "memo", 10), ("gamma memo", "memo", 20)]
    ):
        ok(
            upload(admin, case["id"], (f"{i}".encode() * size), f"f{i}.txt", title=title, document_type=kind),
            201,
        )
    url = f"/cases/{case['id']}/documents"
    by_title = ok(admin.get(url, params={"sort": "title", "order": "asc"}))
    assert [d["title"] for d in by_title] == ["Alpha memo", "beta brief", "gamma memo"]
    by_size = ok(admin.get(url, params={"sort": "file_size", "order": "desc"}))
    assert [d["file_size"] for d in by_size] == [30, 20, 10]
    memos = admin.get(url, params={"document_type": "memo", "limit": 1, "page": 2})
    assert len(ok(memos)) == 1 and memos.json()["meta"]["pagination"] == {
        "page": 2,
        "limit": 1,
        "total": 2,
        "pages": 2,
    }
    assert [d["title"] for d in ok(admin.get(url, params={"search": "GAMM"}))] == ["gamma memo"]
    assert all(set(d) == {"id", "title"} for d in ok(admin.get(url, params={"fields": "id,title"})))
    api_error(admin.get(url, params={"sort": "sha256"}), 422, "VALIDATION_ERROR")
    api_error(admin.get("/cases/case_nope/documents"), 404, "NOT_FOUND")


def test_document_permissions(api: Api, admin: httpx.Client, case) -> None:
    doc = ok(upload(admin, case["id"]), 201)
    _, viewer = api.make_user("viewer")
    with api.client(token=viewer) as c:
        assert c.get(f"/documents/{doc['id']}/content").content == TEXT
        auth_error(upload(c, case["id"]), 403, "AUTH_010")
        auth_error(c.patch(f"/documents/{doc['id']}", json={"title": "x"}), 403, "AUTH_010")
        auth_error(c.delete(f"/documents/{doc['id']}"), 403, "AUTH_010")
    writer_key = api.make_key(["write:documents"])
    writer, writer_id = writer_key["key"], writer_key["id"]
    with api.client(api_key=writer) as c:
        made = ok(upload(c, case["id"]), 201)
        assert made == {"id": made["id"]}  # a write answer shows no more than the key may read
        assert ok(c.patch(f"/documents/{made['id']}", json={"title": "renamed"})) == {"id": made["id"]}
        auth_error(c.get(f"/documents/{made['id']}"), 403, "AUTH_010")
    uploaded = ok(admin.get(f"/documents/{made['id']}"))
    assert uploaded["title"] == "renamed"
    assert (
        uploaded["uploaded_by"] == ok(admin.get("/users/me"))["id"]
        and uploaded["uploaded_via_key"] == writer_id
    )
    with api.client() as c:
        auth_error(upload(c, case["id"]), 401, "AUTH_002")


def test_openapi_describes_the_upload(api: Api) -> None:
    spec = plain.get(api.root + "/openapi.json").json()
    body = spec["paths"]["/api/v1/cases/{case_id}/documents"]["post"]["requestBody"]
    assert set(body["content"]["multipart/form-data"]["schema"]["properties"]) >= {"file", "tags", "title"}


def test_document_list_filters_tags_processing_status_and_file_type(admin: httpx.Client) -> None:
    case = new_case(admin)
    url = f"/cases/{case['id']}/documents"
    memo = ok(upload(admin, case["id"], title="memo", tags=["Contract", "evidence"]), 201)
    note = ok(upload(admin, case["id"], title="note", tags=["draft"]), 201)
    scan = ok(upload(admin, case["id"], PDF, "scan.pdf", title="scan"), 201)

    def titles(**params: str) -> list[str]:
        return sorted(d["title"] for d in ok(admin.get(url, params=params)))

    # Tags: a document with any of the given tags (like every comma-separated filter), ignoring case.
    assert titles(tags="evidence") == ["memo"]
    assert titles(tags="contract") == ["memo"]
    assert titles(tags="draft,evidence") == ["memo", "note"]
    assert titles(tags="nothing") == []
    assert titles(file_type="application/pdf") == ["scan"]
    assert titles(file_type="text/plain,application/pdf") == ["memo", "note", "scan"]
    assert titles(processing_status="skipped") == ["memo", "note", "scan"]
    assert titles(processing_status="pending,failed") == []
    assert titles(processing_status="skipped", tags="draft") == ["note"]
    assert {memo["id"], note["id"], scan["id"]} == {d["id"] for d in ok(admin.get(url))}
    error = api_error(admin.get(url, params={"processing_status": "done"}), 422, "VALIDATION_ERROR")
    assert "processing_status" in details(error)


def test_head_on_content_answers_like_get(api: Api, admin: httpx.Client, case) -> None:
    doc = ok(upload(admin, case["id"], TEXT), 201)
    url = f"/documents/{doc['id']}/content"
    get, head = admin.get(url), admin.head(url)
    assert head.status_code == 200 and head.content == b""
    for name in ("content-type", "content-length", "etag", "accept-ranges", "content-disposition"):
        assert head.headers[name] == get.headers[name], name
    assert head.headers["content-length"] == str(len(TEXT))
    part = admin.head(url, headers={"Range": "bytes=2-5"})
    assert part.status_code == 206 and part.headers["content-length"] == "4" and part.content == b""
    assert admin.head(url, headers={"If-None-Match": get.headers["etag"]}).status_code == 304
    assert admin.head("/documents/doc_nope/content").status_code == 404
    with api.client() as c:
        assert c.head(url).status_code == 401
    with api.client(api_key=api.make_key(["read:cases"])["key"]) as c:
        assert c.head(url).status_code == 403


def test_an_api_key_upload_names_the_keys_creator(api: Api, admin: httpx.Client, case) -> None:
    me = ok(admin.get("/users/me"))
    key = api.make_key(["write:documents", "read:documents"])
    with api.client(api_key=key["key"]) as c:
        made = ok(upload(c, case["id"]), 201)
    assert made["uploaded_by"] == me["id"] and made["uploaded_via_key"] == key["id"]
    [event] = api.events("document.uploaded", document_id=made["id"])
    assert event["uploaded_by"] == me["id"] and event["uploaded_via_key"] == key["id"]
    by_user = ok(upload(admin, case["id"]), 201)
    assert by_user["uploaded_by"] == me["id"] and by_user["uploaded_via_key"] is None
