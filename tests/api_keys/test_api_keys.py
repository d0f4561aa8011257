"""API keys: shown once, stored hashed, permission grammar, expiry, revocation, no /admin."""

from __future__ import annotations

import hashlib
import time
from datetime import UTC, datetime, timedelta

import httpx

from casefile.auth.principal_cache import UNSHARED_MAX_AGE_SECONDS
from tests.support.assertions import api_error, auth_error, details, ok
from tests.support.factories import new_case
from tests.support.servers import Api


def _in(days: float) -> str:
    return (datetime.now(UTC) + timedelta(days=days)).isoformat().replace("+00:00", "Z")


def test_key_is_shown_once_and_stored_hashed(api: Api, admin: httpx.Client) -> None:
    created = api.make_key(["read:cases"], expires_at=_in(30))
    secret = created["key"]
    assert secret.startswith(f"cf_{created['prefix']}_") and len(secret) > 40
    got = ok(admin.get(f"/admin/api-keys/{created['id']}"))
    assert "key" not in got and got["prefix"] == created["prefix"]
    [(stored_hash,)] = api.sql("SELECT key_hash FROM api_keys WHERE id = :id", id=created["id"])
    assert stored_hash == hashlib.sha256(secret.encode()).hexdigest()
    dump = api.sql("SELECT * FROM api_keys")
    assert secret not in repr(dump)


def test_permission_grammar(api: Api, admin: httpx.Client) -> None:
    for good in (["read:cases", "write:documents"], ["*:cases"], ["read:*"], ["*:*"], ["delete:api_keys"]):
        api.make_key(good)
    for bad in (["fly:cases"], ["read:planets"], ["read"], ["read:cases:x"], [], ["READ:cases"]):
        r = admin.post("/admin/api-keys", json={"name": "bad", "permissions": bad})
        assert "permissions" in details(api_error(r, 422, "VALIDATION_ERROR")), bad


def test_expiry_in_the_past_is_refused_and_expired_keys_stop(api: Api, admin: httpx.Client) -> None:
    r = admin.post(
        "/admin/api-keys", json={"name": "old", "permissions": ["read:cases"], "expires_at": _in(-1)}
    )
    assert details(api_error(r, 422, "VALIDATION_ERROR")) == {"expires_at": "Expiry must be in the future"}
    r = admin.post(
        "/admin/api-keys",
        json={"name": "naive", "permissions": ["read:cases"], "expires_at": "2030-01-01T00:00:00"},
    )
    assert "expires_at" in details(api_error(r, 422, "VALIDATION_ERROR"))
    key = api.make_key(["read:cases"], expires_at=_in(1))
    with api.client(api_key=key["key"]) as c:
        ok(c.get("/cases"))
        api.sql("UPDATE api_keys SET expires_at = :t WHERE id = :id", t=datetime(2020, 1, 1), id=key["id"])
        # A change made behind the server's back (SQL, not the API) reaches its cache of callers
        # once the entry is older than the stated bound (casefile.auth.principal_cache).
        time.sleep(UNSHARED_MAX_AGE_SECONDS)
        auth_error(c.get("/cases"), 401, "AUTH_003")


def test_keys_act_with_exactly_their_permissions(api: Api, admin: httpx.Client) -> None:
    case = new_case(admin)
    writer = api.make_key(["write:cases"])["key"]
    with api.client(api_key=writer) as c:
        made = ok(c.post("/cases", json={"title": "by key"}), 201)
        assert made == {"id": made["id"]}  # a write answer shows no more than the key may read
        assert ok(admin.get(f"/cases/{made['id']}"))["created_by"].startswith("key_")
        auth_error(c.get(f"/cases/{case['id']}"), 403, "AUTH_010")  # write does not imply read
        auth_error(c.delete(f"/cases/{case['id']}"), 403, "AUTH_010")
    everything = api.make_key(["*:cases"])["key"]
    with api.client(api_key=everything) as c:
        ok(c.get(f"/cases/{case['id']}"))
        ok(c.delete(f"/cases/{case['id']}"))
        auth_error(c.get("/users"), 403, "AUTH_010")


def test_keys_never_reach_admin_endpoints(api: Api) -> None:
    key = api.make_key(["*:*"])["key"]
    with api.client(api_key=key) as c:
        auth_error(c.get("/admin/api-keys"), 403, "AUTH_011")
        auth_error(c.post("/admin/api-keys", json={"name": "x", "permissions": ["*:*"]}), 403, "AUTH_011")


def test_revocation_is_immediate_and_listed(api: Api, admin: httpx.Client) -> None:
    key = api.make_key(["read:cases"])
    with api.client(api_key=key["key"]) as c:
        ok(c.get("/cases"))
        assert ok(admin.delete(f"/admin/api-keys/{key['id']}")) == {"id": key["id"], "deleted": True}
        auth_error(c.get("/cases"), 401, "AUTH_003")
    assert ok(admin.get(f"/admin/api-keys/{key['id']}"))["revoked_at"]


def test_malformed_and_unknown_keys(api: Api) -> None:
    real = api.make_key(["read:cases"])["key"]
    for wrong in ("cf_nothing", "garbage", real[:-1] + ("A" if real[-1] != "A" else "B"), "x" * 500):
        with api.client(api_key=wrong) as c:
            auth_error(c.get("/cases"), 401, "AUTH_003")


def test_last_used_at_is_recorded(api: Api, admin: httpx.Client) -> None:
    key = api.make_key(["read:cases"])
    assert key["last_used_at"] is None
    with api.client(api_key=key["key"]) as c:
        ok(c.get("/cases"))
    assert ok(admin.get(f"/admin/api-keys/{key['id']}"))["last_used_at"]


def test_key_listing_is_paginated(api: Api, admin: httpx.Client) -> None:
    for _ in range(3):
        api.make_key(["read:cases"])
    r = admin.get("/admin/api-keys", params={"limit": 2, "sort": "created_at", "order": "desc"})
    assert len(ok(r)) == 2 and r.json()["meta"]["pagination"]["total"] >= 3


def test_admin_area_hides_its_routes_from_non_admins(api: Api, admin: httpx.Client) -> None:
    _, token = api.make_user("attorney")
    with api.client(token=token) as c:
        auth_error(c.get("/admin/anything"), 403, "AUTH_011")
    with api.client() as c:
        auth_error(c.get("/admin/anything"), 401, "AUTH_002")
    api_error(admin.get("/admin/anything"), 404, "NOT_FOUND")


def test_a_key_never_grants_more_than_its_creator_now_has(api: Api, admin: httpx.Client) -> None:
    """A key's permissions are cut down, on every request, to what its creator's current role grants."""
    creator, token = api.make_user("admin")
    with api.client(token=token) as c:
        key = ok(c.post("/admin/api-keys", json={"name": "mine", "permissions": ["*:*"]}), 201)["key"]
    with api.client(api_key=key) as c:
        ok(c.get("/users"))
        ok(admin.patch(f"/users/{creator['id']}", json={"role": "viewer"}))
        ok(c.get("/cases"))  # a viewer reads cases
        auth_error(c.post("/cases", json={"title": "no longer"}), 403, "AUTH_010")
        auth_error(c.get("/users"), 403, "AUTH_010")
        ok(admin.patch(f"/users/{creator['id']}", json={"role": "attorney"}))
        ok(c.post("/cases", json={"title": "again"}), 201)
        ok(admin.patch(f"/users/{creator['id']}", json={"active": False}))
        auth_error(c.get("/cases"), 403, "AUTH_010")  # a disabled creator's key can do nothing
        ok(admin.patch(f"/users/{creator['id']}", json={"active": True}))
        ok(c.get("/cases"))
        ok(admin.delete(f"/users/{creator['id']}"))
        auth_error(c.get("/cases"), 403, "AUTH_010")  # nor can a deleted one's
