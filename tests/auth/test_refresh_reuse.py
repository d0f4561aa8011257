"""Refresh-token reuse detection (RFC 9700, 4.14.2; docs/api-conventions.md#authentication): the
retry grace is for the client that exchanged the token. A replay inside the grace from another
address or user agent, or once the new pair's refresh token has been used, revokes the session."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from tests.support.assertions import auth_error, ok
from tests.support.servers import Api


@contextmanager
def client_from(
    api: Api, address: str = "127.0.0.1", user_agent: str = "casefile-app/1.0"
) -> Iterator[httpx.Client]:
    """A client connecting from `address` (any of 127.0.0.0/8 reaches the loopback server)."""
    transport = httpx.HTTPTransport(local_address=address)
    with httpx.Client(
        base_url=api.base, transport=transport, headers={"User-Agent": user_agent}, timeout=30
    ) as client:
        yield client


def _refresh(client: httpx.Client, token: str) -> httpx.Response:
    return client.post("/auth/refresh", json={"refresh_token": token})


def _session_is_revoked(api: Api, pair: dict[str, Any]) -> None:
    with api.client() as c:
        auth_error(c.get("/users/me", headers={"Authorization": f"Bearer {pair['token']}"}), 401, "AUTH_001")
        auth_error(_refresh(c, pair["refresh_token"]), 401, "AUTH_005")


def test_a_retry_from_the_same_client_gets_the_same_pair(api: Api) -> None:
    session = api.login()
    with client_from(api) as app:
        first = ok(_refresh(app, session["refresh_token"]))
        again = ok(_refresh(app, session["refresh_token"]))
    assert (again["token"], again["refresh_token"]) == (first["token"], first["refresh_token"])
    with api.client(token=first["token"]) as c:
        ok(c.get("/users/me"))


def test_a_replay_from_another_user_agent_revokes_the_session(api: Api) -> None:
    session = api.login()
    with client_from(api) as app, client_from(api, user_agent="curl/8.5.0") as thief:
        first = ok(_refresh(app, session["refresh_token"]))
        auth_error(_refresh(thief, session["refresh_token"]), 401, "AUTH_005")
        auth_error(_refresh(app, session["refresh_token"]), 401, "AUTH_005")  # no retry either now
    _session_is_revoked(api, first)


def test_a_replay_from_another_address_revokes_the_session(api: Api) -> None:
    session = api.login()
    with client_from(api) as app, client_from(api, address="127.0.0.2") as thief:
        first = ok(_refresh(app, session["refresh_token"]))
        auth_error(_refresh(thief, session["refresh_token"]), 401, "AUTH_005")
    _session_is_revoked(api, first)


def test_a_replay_after_the_new_pair_was_used_revokes_the_session(api: Api) -> None:
    session = api.login()
    with client_from(api) as app:
        first = ok(_refresh(app, session["refresh_token"]))
        second = ok(_refresh(app, first["refresh_token"]))  # the client had the pair: it used it
        auth_error(_refresh(app, session["refresh_token"]), 401, "AUTH_005")  # inside the grace
    _session_is_revoked(api, second)


def test_the_revocation_is_recorded(api: Api) -> None:
    session = api.login()
    with client_from(api) as app, client_from(api, user_agent="curl/8.5.0") as thief:
        ok(_refresh(app, session["refresh_token"]))
        auth_error(_refresh(thief, session["refresh_token"]), 401, "AUTH_005")
    [(reason,)] = api.sql(
        "SELECT s.revoked_reason FROM auth_sessions s JOIN refresh_tokens t ON t.session_id = s.id"
        " WHERE t.token_hash = :hash",
        hash=hashlib.sha256(session["refresh_token"].encode()).hexdigest(),
    )
    assert reason == "refresh_token_reuse"
