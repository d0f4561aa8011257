"""Input that no endpoint can take is refused the same way everywhere, on both databases
(docs/api-conventions.md#errors): NUL characters in any string, JSON bodies that are not UTF-8,
nested too deep or holding non-finite numbers, each 422 VALIDATION_ERROR naming the field; and an
unhandled error closes the connection it answered on, saying so."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from fastapi import FastAPI

from tests.support.assertions import api_error, details, ok
from tests.support.factories import new_case, unique
from tests.support.servers import Api


def test_nul_in_a_json_body_field_names_the_field(api: Api, admin: httpx.Client) -> None:
    with api.client() as anonymous:
        r = anonymous.post("/auth/login", json={"email": "a\u0000@b.example", "password": "x" * 12})
    assert "email" in details(api_error(r, 422, "VALIDATION_ERROR"))
    r = admin.post("/cases", json={"title": "A\u0000B", "case_number": unique("N")})
    assert "title" in details(api_error(r, 422, "VALIDATION_ERROR"))
    r = admin.post("/cases", json={"title": "ok", "case_number": unique("N"), "tags": ["a", "b\u0000"]})
    assert "tags.1" in details(api_error(r, 422, "VALIDATION_ERROR"))
    # Behind a byte order mark, which the framework's parser skips, too.
    body = json.dumps({"title": "A\u0000B", "case_number": unique("N")}).encode()
    assert "title" in details(api_error(post_raw(admin, b"\xef\xbb\xbf" + body), 422, "VALIDATION_ERROR"))


@pytest.fixture
def hook(admin: httpx.Client) -> Iterator[dict]:
    body = {
        "name": unique("h"),
        "url": "http://127.0.0.1:9/x",
        "events": ["case.created"],
        "secret": "s" * 24,
    }
    made = ok(admin.post("/admin/webhooks", json=body), 201)
    yield made
    admin.delete(f"/admin/webhooks/{made['id']}")


def test_nul_anywhere_in_free_json_is_refused(admin: httpx.Client, hook: dict) -> None:
    for test_data, field in (({"a": {"b": ["x\u0000"]}}, "test_data.a.b.0"), ({"k\u0000": 1}, "test_data")):
        r = admin.post(
            f"/admin/webhooks/{hook['id']}/test", json={"event_type": "case.created", "test_data": test_data}
        )
        assert field in details(api_error(r, 422, "VALIDATION_ERROR"))


def test_nul_in_query_path_and_form_values_names_the_parameter(admin: httpx.Client) -> None:
    r = admin.get("/cases", params={"jurisdiction": "x\u0000"})
    assert "jurisdiction" in details(api_error(r, 422, "VALIDATION_ERROR"))
    r = admin.get("/cases/case_%00")
    assert "case_id" in details(api_error(r, 422, "VALIDATION_ERROR"))
    case = new_case(admin)
    r = admin.post(
        f"/cases/{case['id']}/documents", data={"title": "memo\u0000"}, files={"file": ("a.txt", b"hello")}
    )
    assert "title" in details(api_error(r, 422, "VALIDATION_ERROR"))


def post_raw(admin: httpx.Client, content: bytes) -> httpx.Response:
    return admin.post("/cases", content=content, headers={"Content-Type": "application/json"})


def test_a_body_that_is_not_utf8_is_a_validation_error_on_body(admin: httpx.Client) -> None:
    utf16 = json.dumps({"title": "A\u0000B", "case_number": unique("N")}).encode("utf-16-le")
    for content in (b"\xff\xfe\x00{", b'{"title": "caf\xe9"}', utf16):
        assert details(api_error(post_raw(admin, content), 422, "VALIDATION_ERROR")) == {
            "body": "The body is not UTF-8"
        }


def test_deeply_nested_bodies_are_refused_without_a_500(admin: httpx.Client) -> None:
    for depth in (100_000, 900, 65):
        r = post_raw(admin, ("[" * depth + "]" * depth).encode())
        assert "body" in details(api_error(r, 422, "VALIDATION_ERROR"))
    # Brackets inside strings are text, not nesting.
    r = admin.post("/cases", json={"title": "[" * 500, "case_number": unique("N")})
    assert ok(r, 201)["title"] == "[" * 500


def test_non_finite_numbers_are_refused_in_every_body(admin: httpx.Client, hook: dict) -> None:
    for literal in ("NaN", "Infinity", "-Infinity", "1e400"):
        r = admin.post(
            f"/admin/webhooks/{hook['id']}/test",
            content=f'{{"event_type": "case.created", "test_data": {{"x": [{literal}]}}}}'.encode(),
            headers={"Content-Type": "application/json"},
        )
        assert "body" in details(api_error(r, 422, "VALIDATION_ERROR"))


def test_times_that_leave_the_calendar_in_utc_are_validation_errors(admin: httpx.Client) -> None:
    body = {"name": unique("k"), "permissions": ["read:cases"], "expires_at": "9999-12-31T23:59:59-23:00"}
    r = admin.post("/admin/api-keys", json=body)
    assert "expires_at" in details(api_error(r, 422, "VALIDATION_ERROR"))


def test_a_multipart_content_type_on_a_bodyless_endpoint_is_not_an_upload(admin: httpx.Client) -> None:
    """Whether a request streams its body is the route's to say, not the caller's Content-Type:
    a multipart type (even without a boundary) sent to an ordinary endpoint is just ignored."""
    headers = {"Content-Type": "multipart/form-data"}
    r = admin.post("/users/me/calendar-token", headers=headers)
    assert r.status_code == 201, r.text
    assert ok(admin.delete("/users/me/calendar-token", headers=headers)) == {"revoked": True}


def add_failing_route(app: FastAPI) -> None:
    @app.get("/explode")
    async def explode() -> None:
        raise RuntimeError("boom")


def test_a_500_says_it_closes_the_connection(make_server) -> None:
    server = make_server(app_hook=add_failing_route, worker_enabled=False)
    with httpx.Client(base_url=server.root, timeout=30) as client:
        r = client.get("/explode")
        api_error(r, 500, "INTERNAL_ERROR")
        assert r.headers["connection"] == "close"
        # The client heard it, so its next request on a new connection just works.
        assert ok(client.get("/healthz"))["status"] == "ok"
