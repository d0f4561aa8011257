"""Query strings on every endpoint: a parameter the route does not declare, or a single-valued one
given twice, is a VALIDATION_ERROR naming it (contract §3), never a silently ignored filter."""

from __future__ import annotations

import httpx

from tests.support import plain
from tests.support.assertions import api_error, auth_error, details, ok
from tests.support.factories import new_case
from tests.support.servers import Api


def _names(response: httpx.Response) -> dict[str, str]:
    return details(api_error(response, 422, "VALIDATION_ERROR"))


def test_an_unknown_parameter_is_named(admin: httpx.Client) -> None:
    assert "stauts" in _names(admin.get("/cases", params={"stauts": "active"}))
    case = new_case(admin)
    # Not only lists: single items, writes, searches and the health checks too.
    assert "expand" in _names(admin.get(f"/cases/{case['id']}", params={"expand": "1"}))
    assert "x" in _names(admin.patch(f"/cases/{case['id']}?x=1", json={"title": "Renamed"}))
    assert "type" in _names(admin.get("/search", params={"q": "contract", "type": "case"}))
    assert "verbose" in _names(admin.get("/users/me", params={"verbose": "true"}))
    assert "x" in _names(plain.get(str(admin.base_url).removesuffix("/api/v1/") + "/healthz?x=1"))
    assert ok(admin.get(f"/cases/{case['id']}"))["title"] == case["title"]  # refused, not applied


def test_a_single_valued_parameter_given_twice_is_named(admin: httpx.Client) -> None:
    assert "status" in _names(admin.get("/cases?status=active&status=closed"))
    assert "limit" in _names(admin.get("/cases?limit=1&limit=2"))
    assert "q" in _names(admin.get("/search?q=a&q=b"))
    # Several values of a filter are one comma-separated value.
    ok(admin.get("/cases?status=active,closed"))


def test_declared_parameters_still_work(admin: httpx.Client) -> None:
    ok(
        admin.get(
            "/cases",
            params={
                "page": 1,
                "limit": 5,
                "sort": "title",
                "order": "asc",
                "search": "x",
                "fields": "id",
                "status": "active",
                "case_type": "civil",
            },
        )
    )
    ok(admin.get("/search", params={"q": "contract", "kind": "case", "page": 1, "limit": 5}))
    ok(admin.get("/admin/deliveries", params={"status": "dead"}))


def test_the_admin_area_answers_non_administrators_first(api: Api) -> None:
    _, viewer = api.make_user("viewer")
    with api.client(token=viewer) as c:
        auth_error(c.get("/admin/api-keys", params={"bogus": "1"}), 403, "AUTH_011")


def test_sso_callback_accepts_what_providers_add(api: Api) -> None:
    # Providers add their own parameters (session_state, error_description, …) to the callback.
    with api.client() as c:
        api_error(c.get("/auth/oauth/callback?code=x&state=y&session_state=z"), 404, "NOT_FOUND")
