"""Single sign-on in the browser: with OpenID Connect configured, the sign-in page offers "Sign in
with <provider>", which goes through the API's flow (a real provider: oidc-provider under node)
and ends in a browser session cookie; the same refusals as the API's callback."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from casefile.auth.browser import COOKIE
from casefile.auth.oidc import FLOW_COOKIE
from tests.support.oidc import CLIENT_ID, CLIENT_SECRET, PASSWORDS, RESOURCE, Provider, install_provider
from tests.support.servers import Api, free_port
from tests.web.conftest import Web, server_with


@pytest.fixture(scope="module")
def sso_web(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Api, Provider]]:
    install_provider()
    port = free_port()
    settings = {
        "oidc_issuer": f"http://127.0.0.1:{port}",
        "oidc_client_id": CLIENT_ID,
        "oidc_client_secret": CLIENT_SECRET,
        "oidc_audience": RESOURCE,
        "oidc_provider_name": "Firm Login",
    }
    tmp: Path = tmp_path_factory.mktemp(f"web-sso-{backend}")
    with server_with(backend, tmp, **settings) as api:
        callbacks = [api.base + "/auth/oauth/callback", api.root + "/app/sign-in/sso/callback"]
        provider = Provider(redirect_uris=callbacks, port=port).start()
        try:
            yield api, provider
        finally:
            provider.stop()


def _at_provider(page: Page, email: str) -> None:
    page.locator("input[name=email]").fill(email)
    page.locator("input[name=password]").fill(PASSWORDS[email])
    page.locator("form button, form input[type=submit]").first.click()


def test_sign_in_with_the_provider_ends_in_a_browser_session(
    web: Web, sso_web: tuple[Api, Provider], backend: str
) -> None:
    api, provider = sso_web
    page = web.page()
    page.goto(api.root + "/app/sign-in")
    button = page.get_by_role("link", name="Sign in with Firm Login")
    expect(button).to_be_visible()
    web.screenshot(page, "sign-in-sso")
    button.click()
    expect(page).to_have_url(re.compile("^" + re.escape(provider.issuer) + "/interaction/"))
    _at_provider(page, "carol@sso.test")
    page.wait_for_url(re.compile(re.escape(api.root) + r"/app$"))
    expect(page.get_by_role("heading", level=1)).to_have_text("My day")
    # A viewer made on the first sign-in, as the API's callback makes them, signed in just now.
    with api.admin() as admin:
        users = admin.get("/users", params={"limit": 100}).json()["data"]
    (carol,) = [u for u in users if u["email"] == "carol@sso.test"]
    assert carol["role"] == "viewer" and carol["last_login_at"]
    (cookie,) = [c for c in page.context.cookies() if c["name"] == COOKIE]
    assert cookie["httpOnly"] and cookie["sameSite"] == "Lax" and cookie["path"] == "/app"
    # No tokens reach the page, and the flow's own cookie is gone.
    assert "refresh_token" not in page.content() and "eyJ" not in page.content()
    assert FLOW_COOKIE not in [c["name"] for c in page.context.cookies()]
    # Signing out ends it like any session.
    page.get_by_role("button", name="Sign out").click()
    page.goto(api.root + "/app")
    expect(page).to_have_url(re.compile(r"/app/sign-in"))


def test_a_callback_without_its_flow_is_refused_on_the_sign_in_page(
    web: Web, sso_web: tuple[Api, Provider]
) -> None:
    api, _ = sso_web
    page = web.page()
    answer = page.goto(api.root + "/app/sign-in/sso/callback?code=stolen&state=guessed")
    assert answer is not None and answer.status == 401
    expect(page.get_by_role("alert")).to_contain_text("Single sign-on failed: the sign-in state is missing")
    assert not [c for c in page.context.cookies() if c["name"] == COOKIE]


def test_without_single_sign_on_there_is_no_button(web: Web) -> None:
    page = web.page()
    page.goto("/app/sign-in")
    expect(page.get_by_role("button", name="Sign in")).to_be_visible()
    expect(page.get_by_role("link", name=re.compile("^Sign in with"))).to_have_count(0)
    assert page.goto("/app/sign-in/sso").status == 404  # type: ignore[union-attr]
