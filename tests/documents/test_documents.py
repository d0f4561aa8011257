"""Documents: streaming uploads, sniffed types, content-addressed storage, downloads, lifecycle."""

from __future__ import annotations

import hashlib
import io
import zipfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from casefile.documents.sniff import HEAD_BYTES
from tests.support import plain
from tests.support.assertions import api_error, auth_error, details, ok
from tests.support.factories import TEXT, new_case, upload
from tests.support.servers import Api

PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + b"\x00" * 64
REAL_DOCS = Path(__file__).parent.parent / "ai" / "real" / "docs"
EXE = b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00" + b"\x00" * 200


def docx() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("_rels/.rels", "<Relationships/>")
        z.writestr("word/document.xml", "<w:document/>")
    return buffer.getvalue()


def plain_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("notes.txt", "hello")
    return buffer.getvalue()


class Storage:
    """What the server keeps on disk and in its tables, to check that refusals keep nothing."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self.content = api.settings.content_dir
        self.temp = api.settings.upload_temp_dir

    def files(self) -> set[Path]:
        return {p for p in self.content.rglob("*") if p.is_file()} if self.content.exists() else set()

    def temp_files(self) -> list[Path]:
        return list(self.temp.iterdir()) if self.temp.exists() else []

    def snapshot(self) -> tuple[int, int, set[Path]]:
        documents = self.api.sql("SELECT count(*) FROM documents")[0][0]
        blobs = self.api.sql("SELECT count(*) FROM blobs")[0][0]
        return documents, blobs, self.files()

    def path_of(self, sha256: str) -> Path:
        return self.content / sha256[:2] / sha256[2:4] / sha256


@pytest.fixture
def storage(api: Api) -> Storage:
    return Storage(api)


@pytest.fixture
def case(admin: httpx.Client) -> dict[str, Any]:
    return new_case(admin)


def test_upload_returns_the_document_and_records_the_event(
    api: Api, admin: httpx.Client, case, storage
) -> None:
    doc = ok(
        upload(
            admin,
            case["id"],
            title="Delivery memo",
            document_type="memo",
            description="Key dates",
            tags=["contract", "evidence"],
        ),
        201,
    )
    me = ok(admin.get("/users/me"))
    assert doc["id"].startswith("doc_") and doc["case_id"] == case["id"]
    assert doc["title"] == "Delivery memo" and doc["document_type"] == "memo"
    assert doc["tags"] == ["contract", "evidence"] and doc["description"] == "Key dates"
    assert doc["file_name"] == "memo.txt" and doc["file_size"] == len(TEXT)
    assert doc["file_type"] == "text/plain" and doc["sha256"] == hashlib.sha256(TEXT).hexdigest()
    assert doc["uploaded_by"] == me["id"] and doc["ai"] is None
    # These servers run with AI processing off (tests/ai/test_pipeline.py covers it on).
    assert doc["processing_status"] == "skipped"
    assert storage.path_of(doc["sha256"]).read_bytes() == TEXT
    [event] = api.events("document.uploaded", document_id=doc["id"])
    assert event == {
        "document_id": doc["id"],
        "case_id": case["id"],
        "title": "Delivery memo",
        "document_type": "memo",
        "tags": ["contract", "evidence"],
        "description": "Key dates",
        "file_size": len(TEXT),
        "file_type": "text/plain",
        "uploaded_by": me["id"],
        "uploaded_via_key": None,
        "uploaded_at": doc["uploaded_at"],
    }
    assert storage.temp_files() == []


@pytest.mark.parametrize(
    "tags",
    [["a", "b"], "a, b", '["a", "b"]', ["a,b", " b "]],
    ids=["repeated", "comma-separated", "json-array", "mixed"],
)
def test_tags_in_each_accepted_form(admin: httpx.Client, case, tags) -> None:
    assert ok(upload(admin, case["id"], tags=tags), 201)["tags"] == ["a", "b"]


def test_title_defaults_to_the_file_name(admin: httpx.Client, case) -> None:
    assert ok(upload(admin, case["id"], name="brief.txt"), 201)["title"] == "brief.txt"


@pytest.mark.parametrize(
    ("content", "name", "expected"),
    [
        (PDF, "looks-like-text.txt", "application/pdf"),
        (TEXT, "invoice.pdf", "text/plain"),
        (docx(), "contract.bin", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
        # A real judgment re-saved by python-docx: its docProps/ parts come before word/.
        (
            (REAL_DOCS / "o22.docx").read_bytes(),
            "judgment.bin",
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        ),
        (PNG, "scan", "image/png"),
        (b"<!DOCTYPE html><html><body>Order</body></html>", "order.txt", "text/html"),
        (b"From: a@b.test\r\nTo: c@d.test\r\nSubject: Offer\r\n\r\nDear Sir,", "mail.txt", "message/rfc822"),
        (b"# Heads of terms\n\n- price\n", "terms.md", "text/markdown"),
        ("Schriftsatz für Müller \u2013 § 823 BGB\n".encode(), "s.txt", "text/plain"),
    ],
)
def test_type_is_detected_from_the_bytes(
    admin: httpx.Client, case, content: bytes, name: str, expected: str
) -> None:
    assert ok(upload(admin, case["id"], content, name), 201)["file_type"] == expected


def test_a_text_file_in_a_legacy_charset_is_accepted_as_text(admin: httpx.Client, case) -> None:
    """A real decision stored in Windows-1252 by its source (`§` is byte 0xA7: not UTF-8); it is
    kept byte for byte. Repeated past the sample the type is detected from, it is still text."""
    decision = (REAL_DOCS / "j01.txt").read_text(encoding="utf-8").encode("cp1252")
    assert b"\xa7" in decision
    for content in (decision, decision * (HEAD_BYTES // len(decision) + 2)):
        document = ok(upload(admin, case["id"], content, "bva-decision.txt"), 201)
        assert document["file_type"] == "text/plain"
        assert admin.get(f"/documents/{document['id']}/content").content == content


def _assert_nothing_kept(storage: Storage, before: tuple[int, int, set[Path]]) -> None:
    assert storage.snapshot() == before
    assert storage.temp_files() == []


@pytest.mark.parametrize(
    ("content", "name"),
    [(EXE, "invoice.pdf"), (plain_zip(), "bundle.docx"), (b"\x00\x01\x02binary\xff" * 10, "data.txt")],
    ids=["executable", "zip", "unknown-binary"],
)
def test_refused_type_is_415_and_keeps_nothing(admin: httpx.Client, case, storage, content, name) -> None:
    before = storage.snapshot()
    api_error(upload(admin, case["id"], content, name), 415, "UNSUPPORTED_MEDIA_TYPE")
    _assert_nothing_kept(storage, before)


def test_empty_or_missing_file_is_422_and_keeps_nothing(admin: httpx.Client, case, storage) -> None:
    before = storage.snapshot()
    r = upload(admin, case["id"], b"")
    assert details(api_error(r, 422, "VALIDATION_ERROR")) == {"file": "File is empty"}
    r = admin.post(f"/cases/{case['id']}/documents", data={"title": "no file"})  # url-encoded form
    assert "file" in details(api_error(r, 422, "VALIDATION_ERROR"))
    r = admin.post(f"/cases/{case['id']}/documents", data={"title": "x"}, files={"other": ("a.txt", b"x")})
    assert "other" in details(api_error(r, 422, "VALIDATION_ERROR"))
    _assert_nothing_kept(storage, before)


def test_bad_form_fields_are_422_and_keep_nothing(admin: httpx.Client, case, storage) -> None:
    before = storage.snapshot()
    r = upload(admin, case["id"], tags='["unclosed"')
    assert "tags" in details(api_error(r, 422, "VALIDATION_ERROR"))
    r = upload(admin, case["id"], title="t" * 501)
    assert "title" in details(api_error(r, 422, "VALIDATION_ERROR"))
    r = upload(admin, case["id"], colour="red")
    assert details(api_error(r, 422, "VALIDATION_ERROR")) == {"colour": "Unknown field"}
    _assert_nothing_kept(storage, before)


def test_malformed_multipart_is_422_and_keeps_nothing(admin: httpx.Client, case, storage) -> None:
    before = storage.snapshot()
    headers = {"Content-Type": "multipart/form-data; boundary=XyZ"}
    truncated = b'--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhello wor'
    r = admin.post(f"/cases/{case['id']}/documents", content=truncated, headers=headers)
    api_error(r, 422, "VALIDATION_ERROR")
    r = admin.post(
        f"/cases/{case['id']}/documents", content=b"x", headers={"Content-Type": "multipart/form-data"}
    )
    api_error(r, 422, "VALIDATION_ERROR")
    r = admin.post(
        f"/cases/{case['id']}/documents", content=b"<xml/>", headers={"Content-Type": "application/xml"}
    )
    api_error(r, 415, "UNSUPPORTED_MEDIA_TYPE")
    _assert_nothing_kept(storage, before)


def test_oversized_upload_is_413_while_streaming_and_keeps_nothing(make_server) -> None:
    server = make_server(max_upload_bytes=100_000)
    storage = Storage(server)
    with server.admin() as admin:
        case = new_case(admin)
        before = storage.snapshot()
        ok(upload(admin, case["id"], b"a" * 100_000), 201)  # exactly the limit is fine
        before = storage.snapshot()
        api_error(upload(admin, case["id"], b"b" * 100_001), 413, "PAYLOAD_TOO_LARGE")
        _assert_nothing_kept(storage, before)

        boundary = "B0undary"

        def endless() -> Iterator[bytes]:  # no Content-Length: the limit must hold as bytes arrive
            head = f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="x.txt"\r\n\r\n'
            yield head.encode()
            for _ in range(1000):
                yield b"c" * 65536

        try:
            r = admin.post(
                f"/cases/{case['id']}/documents",
                content=endless(),
                headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
            )
            api_error(r, 413, "PAYLOAD_TOO_LARGE")
        except httpx.WriteError:
            pass  # the server may close the connection before the client finishes sending
        _assert_nothing_kept(storage, before)


def test_upload_to_a_missing_case_is_404(admin: httpx.Client, storage) -> None:
    before = storage.snapshot()
    api_error(upload(admin, "case_nope"), 404, "NOT_FOUND")
    _assert_nothing_kept(storage, before)


def test_identical_uploads_share_one_file_until_the_last_goes(
    api: Api, admin: httpx.Client, case, storage
) -> None:
    content = b"Shared exhibit " + api.base.encode() + case["id"].encode()
    first = ok(upload(admin, case["id"], content, "a.txt"), 201)
    second = ok(upload(admin, new_case(admin)["id"], content, "b.txt"), 201)
    sha = first["sha256"]
    assert second["sha256"] == sha
    assert [p for p in storage.files() if p.name == sha] == [storage.path_of(sha)]
    assert api.sql("SELECT count(*) FROM blobs WHERE sha256 = :s", s=sha)[0][0] == 1
    # Deleting moves to the trash; the purge is what removes content (docs/api-conventions.md#trash).
    ok(admin.delete(f"/documents/{first['id']}"))
    ok(admin.delete(f"/admin/trash/{first['id']}"))
    assert storage.path_of(sha).read_bytes() == content
    assert admin.get(f"/documents/{second['id']}/content").content == content
    ok(admin.delete(f"/documents/{second['id']}"))
    assert storage.path_of(sha).read_bytes() == content  # in the trash, content kept
    ok(admin.delete(f"/admin/trash/{second['id']}"))
    assert not storage.path_of(sha).exists()
    assert api.sql("SELECT count(*) FROM blobs WHERE sha256 = :s", s=sha)[0][0] == 0


def test_concurrent_uploads_and_deletes_of_the_same_bytes_lose_nothing(
    api: Api, admin: httpx.Client, storage
) -> None:
    content = b"Contested exhibit " + api.root.encode()
    case = new_case(admin)
    keeper = ok(upload(admin, case["id"], content), 201)
    token = api.admin_token

    def churn(i: int) -> None:
        with api.client(token=token) as c:
            doc = ok(upload(c, case["id"], content, f"copy-{i}.txt"), 201)
            ok(c.delete(f"/documents/{doc['id']}"))
            ok(c.delete(f"/admin/trash/{doc['id']}"))

    with ThreadPoolExecutor(6) as pool:
        list(pool.map(churn, range(12)))
    assert admin.get(f"/documents/{keeper['id']}/content").content == content
    ok(admin.delete(f"/documents/{keeper['id']}"))
    ok(admin.delete(f"/admin/trash/{keeper['id']}"))
    assert not storage.path_of(keeper["sha256"]).exists()


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
    assert storage.path_of(doc["sha256"]).exists()  # in the trash until purged
    ok(admin.delete(f"/admin/trash/{doc['id']}"))
    assert not storage.path_of(doc["sha256"]).exists()
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
        assert storage.path_of(doc["sha256"]).exists()
        assert api.events("document.deleted", document_id=doc["id"], reason="case_deleted")
    ok(admin.delete(f"/admin/trash/{case['id']}"))
    for doc in docs:
        assert not storage.path_of(doc["sha256"]).exists()
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
