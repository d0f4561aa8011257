"""Login, refresh (single use, reuse detection), logout, token checks, the deny-list."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import httpx
import jwt
import pytest
import redis

from casefile.auth import service as auth_service
from tests.support import plain
from tests.support.assertions import auth_error, ok
from tests.support.servers import ADMIN_EMAIL, ADMIN_PASSWORD, REDIS_URL, Api, redis_available


def test_login_returns_tokens_user_and_records_event(api: Api) -> None:
    data = api.login()
    assert data["token_type"] == "Bearer" and data["expires_in"] == api.settings.jwt_ttl_seconds
    assert abs(data["expires_at"] - (time.time() + data["expires_in"])) < 5
    assert data["user"]["email"] == ADMIN_EMAIL and data["user"]["last_login_at"]
    claims = jwt.decode(data["token"], options={"verify_signature": False})
    assert {"sub", "role", "jti", "iat", "exp", "iss", "aud"} <= set(claims)
    assert jwt.get_unverified_header(data["token"])["alg"] == "HS256"
    assert api.events("user.login", user_id=data["user"]["id"])


def test_login_failures_look_the_same(api: Api) -> None:
    with api.client() as c:
        wrong = auth_error(
            c.post("/auth/login", json={"email": ADMIN_EMAIL, "password": "nope"}), 401, "AUTH_004"
        )
        nobody = auth_error(
            c.post("/auth/login", json={"email": "x@y.test", "password": "nope"}), 401, "AUTH_004"
        )
    assert wrong["error_description"] == nobody["error_description"]


def test_login_is_case_insensitive_on_email(api: Api) -> None:
    assert api.login(ADMIN_EMAIL.upper(), ADMIN_PASSWORD)["token"]


def _forged(api: Api, **claims: object) -> str:
    now = int(time.time())
    base = {
        "sub": "user_x",
        "role": "admin",
        "sid": "sess_x",
        "jti": "j",
        "iat": now,
        "exp": now + 60,
        "iss": api.settings.jwt_issuer,
        "aud": api.settings.jwt_audience,
    }
    base.update(claims)
    return jwt.encode(base, "some-other-key-that-is-long-enough-for-hs256", algorithm="HS256")


def test_bad_tokens_are_auth_001(api: Api) -> None:
    good = api.login()["token"]
    claims = jwt.decode(good, options={"verify_signature": False})
    header, payload, _ = good.split(".")
    unsigned = jwt.encode(claims, key=None, algorithm="none")
    expired = jwt.encode({**claims, "exp": int(time.time()) - 10}, api.settings.jwt_key, algorithm="HS256")
    wrong_audience = jwt.encode({**claims, "aud": "someone-else"}, api.settings.jwt_key, algorithm="HS256")
    for token in ("garbage", f"{header}.{payload}.", unsigned, _forged(api), expired, wrong_audience):
        with api.client(token=token) as c:
            r = c.get("/users/me")
        auth_error(r, 401, "AUTH_001")
        assert r.headers["www-authenticate"].lower().startswith("bearer")
    with api.client(headers={"Authorization": f"Basic {good}"}) as c:
        auth_error(c.get("/users/me"), 401, "AUTH_001")


def test_missing_credentials_is_auth_002(api: Api) -> None:
    with api.client() as c:
        auth_error(c.get("/cases"), 401, "AUTH_002")


def test_refresh_rotates_and_the_old_token_is_single_use(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    first = api.login()
    with api.client() as c:
        second = ok(c.post("/auth/refresh", json={"refresh_token": first["refresh_token"]}))
        assert second["refresh_token"] != first["refresh_token"] and second["token"] != first["token"]
        ok(c.get("/users/me", headers={"Authorization": f"Bearer {second['token']}"}))
        # Presenting the used token again, later than a client's retry, means it leaked: the whole
        # session ends. (The server runs in this process: "later" is a retry window of zero.)
        monkeypatch.setattr(auth_service, "REFRESH_RETRY_WINDOW", timedelta(0))
        auth_error(c.post("/auth/refresh", json={"refresh_token": first["refresh_token"]}), 401, "AUTH_005")
        auth_error(c.post("/auth/refresh", json={"refresh_token": second["refresh_token"]}), 401, "AUTH_005")
        auth_error(
            c.get("/users/me", headers={"Authorization": f"Bearer {second['token']}"}), 401, "AUTH_001"
        )


def test_unknown_refresh_token_is_auth_005(api: Api) -> None:
    with api.client() as c:
        auth_error(c.post("/auth/refresh", json={"refresh_token": "not-a-token"}), 401, "AUTH_005")


def test_concurrent_refreshes_of_one_token_all_get_the_same_new_pair(api: Api) -> None:
    # A client that retries a refresh (or two tabs refreshing at once) must not end its session:
    # within the retry window every presentation of the token gets the one pair it was exchanged for.
    session = api.login()

    def refresh(_: int) -> httpx.Response:
        with api.client() as c:
            return c.post("/auth/refresh", json={"refresh_token": session["refresh_token"]})

    with ThreadPoolExecutor(8) as pool:
        responses = list(pool.map(refresh, range(8)))
    pairs = {(r["token"], r["refresh_token"]) for r in (ok(response) for response in responses)}
    assert len(pairs) == 1
    ((token, refresh_token),) = pairs
    assert refresh_token != session["refresh_token"]
    with api.client(token=token) as c:
        ok(c.get("/users/me"))
        # The new refresh token is the session's live one.
        ok(c.post("/auth/refresh", json={"refresh_token": refresh_token}))


def test_a_retried_refresh_gets_the_same_pair_and_a_late_reuse_ends_the_session(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = api.login()
    with api.client() as c:
        first = ok(c.post("/auth/refresh", json={"refresh_token": session["refresh_token"]}))
        again = ok(c.post("/auth/refresh", json={"refresh_token": session["refresh_token"]}))
        assert (again["token"], again["refresh_token"]) == (first["token"], first["refresh_token"])
        assert again["user"] == first["user"]
        monkeypatch.setattr(auth_service, "REFRESH_RETRY_WINDOW", timedelta(0))
        auth_error(c.post("/auth/refresh", json={"refresh_token": session["refresh_token"]}), 401, "AUTH_005")
        auth_error(c.get("/users/me", headers={"Authorization": f"Bearer {first['token']}"}), 401, "AUTH_001")
        auth_error(c.post("/auth/refresh", json={"refresh_token": first["refresh_token"]}), 401, "AUTH_005")


def test_the_pair_kept_for_a_retry_is_sealed(api: Api) -> None:
    session = api.login()
    with api.client() as c:
        new = ok(c.post("/auth/refresh", json={"refresh_token": session["refresh_token"]}))
    stored = " ".join(str(row) for row in api.sql("SELECT * FROM refresh_tokens"))
    assert new["refresh_token"] not in stored and new["token"] not in stored


def test_refresh_tokens_are_stored_hashed(api: Api) -> None:
    session = api.login()
    stored = [row[0] for row in api.sql("SELECT token_hash FROM refresh_tokens")]
    assert session["refresh_token"] not in stored and len(stored[0]) == 64


def test_logout_ends_access_and_refresh_tokens_at_once(api: Api) -> None:
    session = api.login()
    with api.client(token=session["token"]) as c:
        assert ok(c.post("/auth/logout")) == {"logged_out": True}
        auth_error(c.get("/users/me"), 401, "AUTH_001")
        auth_error(c.post("/auth/refresh", json={"refresh_token": session["refresh_token"]}), 401, "AUTH_005")
    assert api.events("user.logout", user_id=session["user"]["id"])
    # Another session of the same user is untouched.
    with api.client(token=api.login()["token"]) as c:
        ok(c.get("/users/me"))


def test_logout_needs_a_user_token(api: Api) -> None:
    key = api.make_key(["read:cases"])
    with api.client(api_key=key["key"]) as c:
        auth_error(c.post("/auth/logout"), 403, "AUTH_010")
        auth_error(c.get("/users/me"), 403, "AUTH_010")


def test_disabled_user_cannot_log_in_and_loses_tokens(api: Api) -> None:
    user, token = api.make_user("attorney")
    with api.admin() as admin:
        ok(admin.patch(f"/users/{user['id']}", json={"active": False}))
    with api.client(token=token) as c:
        auth_error(c.get("/cases"), 401, "AUTH_006")
        r = c.post("/auth/login", json={"email": user["email"], "password": "User-Passw0rd-123"})
        auth_error(r, 401, "AUTH_006")


def test_role_change_takes_effect_on_existing_tokens(api: Api) -> None:
    user, token = api.make_user("viewer")
    with api.client(token=token) as c:
        auth_error(c.post("/cases", json={"title": "not yet"}), 403, "AUTH_010")
        with api.admin() as admin:
            ok(admin.patch(f"/users/{user['id']}", json={"role": "paralegal"}))
        ok(c.post("/cases", json={"title": "now allowed"}), 201)


def test_bearer_wins_when_both_credentials_are_sent(api: Api) -> None:
    key = api.make_key(["read:cases"])
    with api.client(token="garbage", api_key=key["key"]) as c:
        auth_error(c.get("/cases"), 401, "AUTH_001")
    with api.client(token=api.admin_token, api_key=key["key"]) as c:
        ok(c.post("/cases", json={"title": "as the admin, not the key"}), 201)


@pytest.mark.skipif(not redis_available(), reason="Redis is not reachable (CI requires it)")
def test_deny_list_in_redis(make_server) -> None:
    server = make_server(redis_url=REDIS_URL)
    session = server.login()
    sid = jwt.decode(session["token"], options={"verify_signature": False})["sid"]
    with server.client(token=session["token"]) as c:
        ok(c.post("/auth/logout"))
        auth_error(c.get("/users/me"), 401, "AUTH_001")
    ttl = redis.Redis.from_url(REDIS_URL).ttl(f"casefile:denied-session:{sid}")
    assert 0 < ttl <= server.settings.jwt_ttl_seconds + 61
    assert server.sql("SELECT count(*) FROM revoked_sessions")[0][0] == 0  # not in the database


def test_health_ignores_credentials(api: Api) -> None:
    assert plain.get(api.root + "/healthz", headers={"Authorization": "Bearer garbage"}).status_code == 200
