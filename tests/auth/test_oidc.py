"""Single sign-on against a real OpenID provider (oidc-provider under node, on loopback): the
browser flow, the provider's access tokens on the API, refusals, and key rotation."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import jwt as pyjwt
import pytest
from cryptography.hazmat.primitives import serialization
from joserfc.jwk import RSAKey

from casefile.auth.oidc import FLOW_COOKIE, MIN_REFETCH_SECONDS
from tests.support.assertions import api_error, auth_error, ok
from tests.support.factories import new_case
from tests.support.oidc import (
    CLIENT_ID,
    CLIENT_SECRET,
    OTHER_RESOURCE,
    RESOURCE,
    Provider,
    install_provider,
    jwt_parts,
    new_key,
    sign_in_at_provider,
    unsigned,
)
from tests.support.servers import Api, free_port, running_server


def sso_settings(issuer: str) -> dict[str, Any]:
    return {
        "oidc_issuer": issuer,
        "oidc_client_id": CLIENT_ID,
        "oidc_client_secret": CLIENT_SECRET,
        "oidc_audience": RESOURCE,
    }


@dataclass
class Sso:
    api: Api
    provider: Provider


@pytest.fixture(scope="module")
def sso(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sso]:
    """A Casefile server configured for single sign-on, and its provider (one per database)."""
    install_provider()
    port = free_port()
    tmp = tmp_path_factory.mktemp(f"sso-{backend}")
    with running_server(backend, tmp, **sso_settings(f"http://127.0.0.1:{port}")) as api:
        provider = Provider(redirect_uris=[api.base + "/auth/oauth/callback"], port=port).start()
        try:
            yield Sso(api, provider)
        finally:
            provider.stop()


def callback_url(api: Api, browser: httpx.Client, email: str) -> httpx.URL:
    """Start at Casefile, sign in at the provider; the URL the provider sends the browser back to."""
    start = browser.get(api.base + "/auth/oauth/authorize")
    assert start.status_code == 302, start.text
    back = sign_in_at_provider(browser, browser.get(start.headers["location"], follow_redirects=True), email)
    assert back.status_code in (302, 303), back.text
    url = httpx.URL(back.headers["location"])
    assert str(url).startswith(api.base + "/auth/oauth/callback?"), url
    return url


def browser_sign_in(api: Api, email: str) -> httpx.Response:
    """The whole single sign-on as a browser does it; Casefile's answer to the callback."""
    with httpx.Client(timeout=30) as browser:
        return browser.get(callback_url(api, browser, email))


def users_with_email(api: Api, email: str) -> list[Any]:
    return api.sql("SELECT id, role FROM users WHERE lower(email) = :email", email=email.lower())


def get_me(api: Api, token: str) -> httpx.Response:
    with api.client(token=token) as c:
        return c.get("/users/me")


def test_sign_in_creates_a_viewer_once_and_answers_like_login(sso: Sso) -> None:
    api, provider = sso.api, sso.provider
    assert users_with_email(api, "alice@sso.test") == []
    with httpx.Client(timeout=30) as browser:
        start = browser.get(api.base + "/auth/oauth/authorize")
        assert start.status_code == 302, start.text
        location = start.headers["location"]
        assert location.startswith(provider.issuer + "/auth?")
        query = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
        assert query["response_type"] == "code" and query["client_id"] == CLIENT_ID
        assert query["code_challenge_method"] == "S256" and len(query["code_challenge"]) == 43
        assert query["redirect_uri"] == api.base + "/auth/oauth/callback"
        assert len(query["state"]) >= 32 and len(query["nonce"]) >= 32
        assert "openid" in query["scope"].split() and "email" in query["scope"].split()
        flow_cookie = start.headers["set-cookie"]
        attributes = flow_cookie.lower()
        assert flow_cookie.startswith(FLOW_COOKIE + "=") and "httponly" in attributes
        assert "samesite=lax" in attributes and "max-age=600" in attributes
        assert "path=/api/v1/auth/oauth/callback" in attributes
        assert query["state"] not in flow_cookie  # sealed, not readable
        back = sign_in_at_provider(browser, browser.get(location, follow_redirects=True), "alice@sso.test")
        first = browser.get(back.headers["location"])
    data = ok(first)
    assert "max-age=0" in first.headers["set-cookie"].lower()  # the flow cookie is used up
    like_login = api.login()
    assert set(data) == set(like_login) and set(data["user"]) == set(like_login["user"])
    assert data["token_type"] == "Bearer" and data["expires_in"] == api.settings.jwt_ttl_seconds
    user = data["user"]
    assert user["email"] == "alice@sso.test" and user["role"] == "viewer" and user["active"] is True
    assert user["name"] == "Alice Newcomer" and user["last_login_at"]
    assert jwt_parts(data["token"])[1]["iss"] == api.settings.jwt_issuer  # our own token pair
    with api.client(token=data["token"]) as c:
        assert ok(c.get("/users/me"))["id"] == user["id"]
        ok(c.get("/cases"))
    with api.client() as c:
        refreshed = ok(c.post("/auth/refresh", json={"refresh_token": data["refresh_token"]}))
        # No password was set: the password login never lets this user in.
        auth_error(
            c.post("/auth/login", json={"email": "alice@sso.test", "password": "alice-password"}),
            401,
            "AUTH_004",
        )
    assert refreshed["user"]["id"] == user["id"]
    assert len(api.events("user.login", user_id=user["id"], method="oidc")) == 1

    again = ok(browser_sign_in(api, "alice@sso.test"))
    assert again["user"]["id"] == user["id"] and again["user"]["role"] == "viewer"
    assert len(users_with_email(api, "alice@sso.test")) == 1
    assert len(api.events("user.login", user_id=user["id"], method="oidc")) == 2


def test_existing_user_is_matched_by_email_whatever_its_case_and_keeps_its_role(sso: Sso) -> None:
    api, provider = sso.api, sso.provider
    with api.admin() as admin:
        bob = ok(
            admin.post(
                "/users",
                json={
                    "email": "bob.stone@firm.test",
                    "name": "Bob",
                    "password": "Bob-Passw0rd-123",
                    "role": "attorney",
                },
            ),
            201,
        )
    data = ok(browser_sign_in(api, "Bob.Stone@Firm.Test"))  # the provider spells it so
    assert data["user"]["id"] == bob["id"] and data["user"]["role"] == "attorney"
    access_token = provider.tokens("Bob.Stone@Firm.Test")["access_token"]
    assert jwt_parts(access_token)[1]["email"] == "Bob.Stone@Firm.Test"
    with api.client(token=access_token) as c:
        assert ok(c.get("/users/me"))["id"] == bob["id"]
        new_case(c)  # an attorney writes cases
    assert len(users_with_email(api, "bob.stone@firm.test")) == 1
    assert api.login("bob.stone@firm.test", "Bob-Passw0rd-123")["user"]["id"] == bob["id"]


def test_callback_needs_the_state_of_the_browser_that_started(sso: Sso) -> None:
    api = sso.api
    with httpx.Client(timeout=30) as browser:
        callback = callback_url(api, browser, "frank@sso.test")
        params = dict(callback.params)
        flow_cookie = next(c.value for c in browser.cookies.jar if c.name == FLOW_COOKIE)
        tampered = params["state"][:-4] + ("AAAA" if not params["state"].endswith("AAAA") else "BBBB")
        refusals = [
            browser.get(callback.copy_with(params={**params, "state": tampered})),
            browser.get(callback.copy_with(params={k: v for k, v in params.items() if k != "state"})),
            browser.get(callback.copy_with(params={"error": "access_denied", "state": params["state"]})),
            browser.get(callback.copy_with(params={**params, "iss": "http://127.0.0.1:1"})),
        ]
        with httpx.Client(timeout=30) as other_browser:  # a link opened elsewhere: no flow cookie
            refusals.append(other_browser.get(callback))
        with httpx.Client(timeout=30, cookies={FLOW_COOKIE: flow_cookie[:-6] + "AAAAAA"}) as forged:
            refusals.append(forged.get(callback))
        for refusal in refusals:
            body = auth_error(refusal, 401, "AUTH_007")
            assert body["error_description"].startswith("Single sign-on failed")
        # The refusals were for the state alone: the untouched answer signs in.
        data = ok(browser.get(callback))
    assert data["user"]["email"] == "frank@sso.test" and data["user"]["role"] == "viewer"
    # Replayed with the right state: the provider refuses the used code (failed code exchange).
    with httpx.Client(timeout=30, cookies={FLOW_COOKIE: flow_cookie}) as replay:
        body = auth_error(replay.get(callback), 401, "AUTH_007")
    assert "authorization code" in body["error_description"]
    assert len(users_with_email(api, "frank@sso.test")) == 1


def test_provider_access_tokens_are_accepted_on_every_endpoint(sso: Sso) -> None:
    api, provider = sso.api, sso.provider
    access_token = provider.tokens("dave@sso.test")["access_token"]
    header, claims = jwt_parts(access_token)
    assert header["alg"] == "RS256" and claims["iss"] == provider.issuer and claims["aud"] == RESOURCE
    assert claims["email"] == "dave@sso.test"
    assert users_with_email(api, "dave@sso.test") == []
    with api.client(token=access_token) as c:
        ok(c.get("/cases"))
        me = ok(c.get("/users/me"))
        assert me["email"] == "dave@sso.test" and me["role"] == "viewer" and me["active"] is True
        case = {"title": "T", "case_number": f"SSO-{secrets.token_hex(4)}", "case_type": "civil"}
        auth_error(c.post("/cases", json=case), 403, "AUTH_010")  # a viewer reads only
        auth_error(c.get("/admin/webhooks"), 403, "AUTH_011")
    assert users_with_email(api, "dave@sso.test") == [(me["id"], "viewer")]
    with api.admin() as admin:
        ok(admin.patch(f"/users/{me['id']}", json={"role": "attorney"}))
    with api.client(token=access_token) as c:
        new_case(c)  # the role comes from the database, at once
    with httpx.Client(base_url=api.root + "/api", headers={"Authorization": f"Bearer {access_token}"}) as c:
        assert ok(c.get("/users/me"))["id"] == me["id"]  # the unversioned alias too
    assert len(users_with_email(api, "dave@sso.test")) == 1


def _hs256(claims: dict[str, Any], key: bytes, **header: Any) -> str:
    """An HS256 token made by hand (PyJWT refuses a public key as an HMAC secret)."""
    unsigned_token = unsigned({"alg": "HS256", "typ": "at+jwt", **header}, claims).rsplit(".", 1)[0]
    signature = hmac.new(key, unsigned_token.encode(), hashlib.sha256).digest()
    return unsigned_token + "." + base64.urlsafe_b64encode(signature).rstrip(b"=").decode()


def test_tokens_not_valid_for_this_api_are_refused(sso: Sso) -> None:
    api, provider = sso.api, sso.provider
    real = provider.tokens("dave@sso.test")["access_token"]
    other_api = provider.tokens("dave@sso.test", resource=OTHER_RESOURCE)["access_token"]
    assert jwt_parts(other_api)[1]["aud"] == OTHER_RESOURCE
    elsewhere = Provider(redirect_uris=provider.redirect_uris).start()  # another issuer, other keys
    try:
        foreign = elsewhere.tokens("dave@sso.test")["access_token"]
    finally:
        elsewhere.stop()
    key = provider.keys[0]
    public_pem = key.public_key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    # The provider's own key, but without its `alg`, so that it can sign with RS384.
    undeclared = RSAKey.import_key({k: v for k, v in key.as_dict(private=True).items() if k != "alg"})
    now = int(time.time())
    header, payload, signature = real.split(".")
    flipped = "A" if payload[10] != "A" else "B"
    refused = {
        "another audience (the provider's token for another API)": other_api,
        "another issuer (another provider's real token)": foreign,
        "another issuer, signed with this provider's key": provider.sign(provider.claims(iss="https://evil")),
        "another audience, signed with this provider's key": provider.sign(provider.claims(aud="urn:x")),
        "no audience": provider.sign({k: v for k, v in provider.claims().items() if k != "aud"}),
        "expired": provider.sign(provider.claims(iat=now - 1200, exp=now - 600)),
        "not yet valid": provider.sign(provider.claims(nbf=now + 600)),
        "alg none": unsigned({"alg": "none", "typ": "at+jwt"}, provider.claims()),
        "alg none naming the provider's key": unsigned({"alg": "none", "kid": key.kid}, provider.claims()),
        "HS256 with the client secret": pyjwt.encode(
            provider.claims(), CLIENT_SECRET, algorithm="HS256", headers={"kid": key.kid}
        ),
        "HS256 with the provider's public key": _hs256(provider.claims(), public_pem, kid=key.kid),
        "RS384 while the key says RS256": provider.sign(provider.claims(), key=undeclared, alg="RS384"),
        "another key under the provider's key id": provider.sign(provider.claims(), key=new_key(key.kid)),
        "changed after signing": f"{header}.{payload[:10]}{flipped}{payload[11:]}.{signature}",
        "email the provider has not verified": provider.sign(provider.claims(email_verified=False)),
        "no email, and userinfo does not know the token": provider.sign(
            {k: v for k, v in provider.claims().items() if k != "email"}
        ),
    }
    for name, token in refused.items():
        r = get_me(api, token)
        assert r.status_code == 401, f"{name}: {r.status_code} {r.text}"
        auth_error(r, 401, "AUTH_001")
        assert r.headers["www-authenticate"].lower().startswith("bearer")
    ok(get_me(api, real))  # the refusals were for what was changed


def test_unknown_key_ids_do_not_make_casefile_hammer_the_provider(sso: Sso) -> None:
    api, provider = sso.api, sso.provider
    ok(get_me(api, provider.tokens("dave@sso.test")["access_token"]))  # keys cached
    before = provider.jwks_requests()
    stranger = new_key("stranger")
    for _ in range(15):
        token = provider.sign(provider.claims(), key=stranger, kid=secrets.token_hex(8))
        auth_error(get_me(api, token), 401, "AUTH_001")
    assert provider.jwks_requests() - before <= 1


def test_disabled_user_is_refused_like_a_disabled_users_jwt(sso: Sso) -> None:
    api, provider = sso.api, sso.provider
    own = ok(browser_sign_in(api, "carol@sso.test"))
    access_token = provider.tokens("carol@sso.test")["access_token"]
    ok(get_me(api, access_token))
    with api.admin() as admin:
        ok(admin.patch(f"/users/{own['user']['id']}", json={"active": False}))
    ours = auth_error(get_me(api, own["token"]), 401, "AUTH_006")
    theirs = auth_error(get_me(api, access_token), 401, "AUTH_006")
    assert ours["error_description"] == theirs["error_description"]
    auth_error(browser_sign_in(api, "carol@sso.test"), 401, "AUTH_006")


def test_an_unverified_email_cannot_take_over_an_account(sso: Sso) -> None:
    # This provider account claims the administrator's address but has not verified it.
    api, provider = sso.api, sso.provider
    body = auth_error(browser_sign_in(api, "admin@casefile.test"), 401, "AUTH_007")
    assert "verified email" in body["error_description"]
    access_token = provider.tokens("admin@casefile.test")["access_token"]
    assert jwt_parts(access_token)[1]["email_verified"] is False
    auth_error(get_me(api, access_token), 401, "AUTH_001")


def test_key_rotation_is_picked_up_without_restarting_casefile(make_server: Callable[..., Api]) -> None:
    install_provider()
    port = free_port()
    api = make_server(**sso_settings(f"http://127.0.0.1:{port}"))
    provider = Provider(redirect_uris=[api.base + "/auth/oauth/callback"], port=port, keys=[new_key("old")])
    provider.start()
    try:
        old_token = provider.tokens("erin@sso.test")["access_token"]
        ok(get_me(api, old_token))  # Casefile now holds the key set [old]
        fetched = time.monotonic()
        provider.restart([new_key("new"), provider.keys[0]])  # the new key signs from now on
        new_token = provider.tokens("erin@sso.test")["access_token"]
        assert jwt_parts(new_token)[0]["kid"] == "new"
        # The unknown key id makes Casefile fetch the key set again, at most once per
        # MIN_REFETCH_SECONDS: accepted within that time, with a handful of fetches at most.
        while (r := get_me(api, new_token)).status_code != 200:
            auth_error(r, 401, "AUTH_001")
            assert time.monotonic() < fetched + MIN_REFETCH_SECONDS + 5, "the new key was not picked up"
            time.sleep(0.5)
        assert ok(r)["email"] == "erin@sso.test"
        ok(get_me(api, old_token))  # the old key is still published, its tokens still good
        assert provider.jwks_requests() <= 2
    finally:
        provider.stop()


def test_sso_not_configured_is_404(api: Api) -> None:
    with api.client() as c:
        for path in ("/auth/oauth/authorize", "/auth/oauth/callback?code=x&state=y"):
            error = api_error(c.get(path), 404, "NOT_FOUND")
            assert error["message"] == "Single sign-on is not configured on this server"


def test_provider_unreachable_is_503(make_server: Callable[..., Api]) -> None:
    dead = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    api = make_server(**sso_settings(dead))
    with api.client() as c:
        r = c.get("/auth/oauth/authorize")
        error = api_error(r, 503, "SSO_PROVIDER_UNAVAILABLE")
    assert "cannot be reached" in error["message"] and "Traceback" not in r.text
    now = int(time.time())
    claims = {"iss": dead, "sub": "s", "aud": RESOURCE, "iat": now, "exp": now + 60, "email": "x@y.test"}
    token = Provider(redirect_uris=[], port=1).sign(claims)
    with api.client(token=token) as c:
        api_error(c.get("/cases"), 503, "SSO_PROVIDER_UNAVAILABLE")
    with api.client(token="not-a-token") as c:
        auth_error(c.get("/cases"), 401, "AUTH_001")  # nothing to ask the provider about
