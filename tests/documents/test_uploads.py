"""Uploads: streaming, sniffed types, limits, content-addressed storage shared by identical files."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from casefile.storage.sniff import HEAD_BYTES
from tests.documents.samples import EXE, PDF, PNG, REAL_DOCS, Storage, docx, plain_zip
from tests.support.assertions import api_error, details, ok
from tests.support.factories import TEXT, new_case, upload
from tests.support.servers import Api


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
    assert storage.content_of(doc["sha256"]) == TEXT
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


def test_oversized_upload_is_413_while_streaming_and_keeps_nothing(
    make_server, content_store: str, request: pytest.FixtureRequest
) -> None:
    s3 = request.getfixturevalue("s3") if content_store == "s3" else None
    server = make_server(max_upload_bytes=100_000, **(s3.settings(s3.new_bucket()) if s3 else {}))
    storage = Storage(server, s3)
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
    assert [n for n in storage.files() if n.endswith(sha)] == [storage.name_of(sha)]
    assert api.sql("SELECT count(*) FROM blobs WHERE sha256 = :s", s=sha)[0][0] == 1
    # Deleting moves to the trash; the purge is what removes content (docs/api-conventions.md#trash).
    ok(admin.delete(f"/documents/{first['id']}"))
    ok(admin.delete(f"/admin/trash/{first['id']}"))
    assert storage.content_of(sha) == content
    assert admin.get(f"/documents/{second['id']}/content").content == content
    ok(admin.delete(f"/documents/{second['id']}"))
    assert storage.content_of(sha) == content  # in the trash, content kept
    ok(admin.delete(f"/admin/trash/{second['id']}"))
    assert not storage.has(sha)
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
    assert not storage.has(keeper["sha256"])
