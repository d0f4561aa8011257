"""Envelopes, request ids, the error path, health, OpenAPI, the /api alias."""

from __future__ import annotations

import logging
import re

import httpx
import pytest
from fastapi import FastAPI

from tests.support import plain
from tests.support.assertions import api_error, auth_error, ok
from tests.support.servers import Api

TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")


def test_health_and_readiness_need_no_credentials(api: Api) -> None:
    assert ok(plain.get(api.root + "/healthz"))["status"] == "ok"
    assert ok(plain.get(api.root + "/readyz"))["status"] == "ready"


def test_success_envelope_and_request_id(admin: httpx.Client) -> None:
    r = admin.get("/users/me")
    body = r.json()
    assert body["success"] is True
    assert re.match(r"^req_[0-9a-z]{26}$", body["meta"]["request_id"])
    assert TIMESTAMP.match(body["meta"]["timestamp"])
    assert r.headers["x-request-id"] == body["meta"]["request_id"]


def test_incoming_request_id_is_returned_apart_from_ours(admin: httpx.Client) -> None:
    # contract §2: our id is always `req_…`; a well-formed caller id comes back in its own header.
    r = admin.get("/users/me", headers={"X-Request-ID": "trace-42.a_b"})
    assert re.match(r"^req_[0-9a-z]{26}$", r.headers["x-request-id"])
    assert r.headers["x-request-id"] == r.json()["meta"]["request_id"]
    assert r.headers["x-client-request-id"] == "trace-42.a_b"
    refused = admin.get("/no-such-thing", headers={"X-Request-ID": "trace-7"})
    api_error(refused, 404, "NOT_FOUND")
    assert refused.headers["x-request-id"].startswith("req_")
    assert refused.headers["x-client-request-id"] == "trace-7"
    for bad in ("no spaces or <tags>", "x" * 129):
        answer = admin.get("/users/me", headers={"X-Request-ID": bad})
        assert answer.headers["x-request-id"].startswith("req_")
        assert "x-client-request-id" not in answer.headers


def test_unknown_route_and_wrong_method(api: Api, admin: httpx.Client) -> None:
    api_error(admin.get("/no-such-thing"), 404, "NOT_FOUND")
    api_error(plain.get(api.root + "/nowhere"), 404, "NOT_FOUND")
    api_error(admin.request("PATCH", "/auth/login"), 405, "METHOD_NOT_ALLOWED")


def allow(response: httpx.Response) -> set[str]:
    api_error(response, 405, "METHOD_NOT_ALLOWED")
    return {m.strip() for m in response.headers["allow"].split(",")}


def test_wrong_method_names_every_method_of_the_path(api: Api, admin: httpx.Client) -> None:
    # The Allow list is the path's, not the first route's that matched it (one path, many routes).
    assert allow(admin.post("/cases/case_nope")) == {"GET", "PUT", "PATCH", "DELETE"}
    assert allow(admin.request("OPTIONS", "/cases")) == {"GET", "POST"}
    assert allow(httpx.request("OPTIONS", api.base + "/auth/login")) == {"POST"}
    assert allow(admin.request("PURGE", "/search")) == {"GET"}
    api_error(admin.request("OPTIONS", "/no-such-thing"), 404, "NOT_FOUND")


def test_users_me_takes_only_its_own_methods(admin: httpx.Client) -> None:
    """`/users/me` is not a user called "me": it is read-only, and says so (issue 29 item 4)."""
    me = ok(admin.get("/users/me"))
    for method in ("PATCH", "DELETE", "PUT", "POST", "OPTIONS"):
        assert allow(admin.request(method, "/users/me", json={"name": "x"})) == {"GET"}, method
    assert allow(admin.put(f"/users/{me['id']}", json={})) == {"GET", "PATCH", "DELETE"}
    assert ok(admin.get(f"/users/{me['id']}"))["id"] == me["id"]
    api_error(admin.get("/users/user_nobody"), 404, "NOT_FOUND")


def test_wrong_method_on_an_admin_path_is_405_for_administrators_only(api: Api, admin: httpx.Client) -> None:
    assert allow(admin.put("/admin/webhooks")) == {"GET", "POST"}
    assert allow(admin.request("OPTIONS", "/admin/config")) == {"GET", "PATCH"}
    assert allow(admin.request("PURGE", "/admin/api-keys/key_nope")) == {"GET", "DELETE"}
    api_error(admin.put("/admin/nothing-here"), 404, "NOT_FOUND")
    api_error(admin.request("OPTIONS", "/admin/nothing-here"), 404, "NOT_FOUND")
    # Everyone else gets the same answer for admin paths that exist and those that do not.
    _, token = api.make_user("attorney")
    with api.client(token=token) as attorney, api.client() as anonymous:
        for method in ("PUT", "OPTIONS", "PURGE"):
            for path in ("/admin/webhooks", "/admin/nothing-here"):
                auth_error(attorney.request(method, path), 403, "AUTH_011")
                auth_error(anonymous.request(method, path), 401, "AUTH_002")


def test_malformed_json_is_validation_error_on_field_body(admin: httpx.Client) -> None:
    r = admin.post("/cases", content=b'{"title": ', headers={"Content-Type": "application/json"})
    error = api_error(r, 422, "VALIDATION_ERROR")
    assert [d["field"] for d in error["details"]] == ["body"]


def test_json_body_over_one_mebibyte_is_413(admin: httpx.Client) -> None:
    big = b'{"title": "' + b"a" * (1024 * 1024) + b'"}'
    api_error(
        admin.post("/cases", content=big, headers={"Content-Type": "application/json"}),
        413,
        "PAYLOAD_TOO_LARGE",
    )

    def chunks():  # no Content-Length: the limit must hold while reading
        yield b'{"title": "'
        for _ in range(20):
            yield b"a" * 65536
        yield b'"}'

    r = admin.post("/cases", content=chunks(), headers={"Content-Type": "application/json"})
    api_error(r, 413, "PAYLOAD_TOO_LARGE")


def test_json_endpoint_refuses_other_content_types(admin: httpx.Client) -> None:
    r = admin.post("/cases", content=b"title=x", headers={"Content-Type": "text/plain"})
    api_error(r, 415, "UNSUPPORTED_MEDIA_TYPE")


def test_unknown_body_fields_are_refused(admin: httpx.Client) -> None:
    error = api_error(admin.post("/cases", json={"title": "t", "colour": "red"}), 422, "VALIDATION_ERROR")
    assert error["details"] == [{"field": "colour", "message": "Unknown field"}]


def test_unexpected_error_is_500_without_internals(make_server, caplog: pytest.LogCaptureFixture) -> None:
    def add_failing_route(app: FastAPI) -> None:
        @app.get("/explode")
        async def explode() -> None:
            raise RuntimeError("database password is hunter2")

    server = make_server(app_hook=add_failing_route)
    with caplog.at_level(logging.ERROR, logger="casefile.errors"):
        r = plain.get(server.root + "/explode")
    error = api_error(r, 500, "INTERNAL_ERROR")
    assert "hunter2" not in r.text and "Traceback" not in r.text
    assert error["message"] == "An unexpected error occurred"
    request_id = r.headers["x-request-id"]
    assert any(request_id in rec.getMessage() and rec.exc_info for rec in caplog.records)


def test_unversioned_alias_serves_the_same_handlers(api: Api) -> None:
    token = api.admin_token
    v1 = plain.get(api.base + "/users/me", headers={"Authorization": f"Bearer {token}"})
    alias = plain.get(api.root + "/api/users/me", headers={"Authorization": f"Bearer {token}"})
    assert ok(v1) == ok(alias)
    # The administrator area too (its own bucket of the rate limit), and writes.
    admin = plain.get(api.root + "/api/admin/config", headers={"Authorization": f"Bearer {token}"})
    admin_v1 = plain.get(api.base + "/admin/config", headers={"Authorization": f"Bearer {token}"})
    assert ok(admin) == ok(admin_v1)
    # Counted in the one administrator bucket (the next request of that bucket has one less left).
    assert int(admin.headers["x-ratelimit-remaining"]) == int(admin_v1.headers["x-ratelimit-remaining"]) + 1
    created = plain.post(
        api.root + "/api/cases",
        json={"title": "Alias v. Version"},
        headers={"Authorization": f"Bearer {token}"},
    )
    case = ok(created, 201)
    assert ok(plain.get(api.base + f"/cases/{case['id']}", headers={"Authorization": f"Bearer {token}"}))[
        "title"
    ] == ("Alias v. Version")
    # A path under neither is no endpoint.
    api_error(
        plain.get(api.root + "/apix/users/me", headers={"Authorization": f"Bearer {token}"}), 404, "NOT_FOUND"
    )


def test_openapi_and_docs(api: Api) -> None:
    spec = plain.get(api.root + "/openapi.json").json()
    assert "/api/v1/cases" in spec["paths"] and "/api/v1/auth/login" in spec["paths"]
    assert not any(p.startswith("/api/cases") for p in spec["paths"])  # the alias is not listed twice
    assert plain.get(api.root + "/docs").status_code == 200
