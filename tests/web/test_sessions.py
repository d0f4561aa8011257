"""Sessions and the protections of the web app: the cookie's flags, CSRF, the Content-Security-
Policy and framing, the login rate limit on the form, and the end of a session by sign-out,
disabling, a role change and the idle time-out."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from playwright.sync_api import expect

from casefile.auth.browser import COOKIE, Ticket
from casefile.web.security import CSP
from casefile.web.signin import FORM_COOKIE
from tests.support.servers import ADMIN_EMAIL, ADMIN_PASSWORD, Api
from tests.support.waiting import wait_until, well_inside_a_minute
from tests.web.conftest import CSP_VIOLATIONS, USER_PASSWORD, Web, server_with

TEMPLATES = Path(__file__).parents[2] / "src" / "casefile" / "web" / "templates"


@contextmanager
def _signed_in_client(api: Api, email: str, password: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=api.root, timeout=30) as client:
        form = client.get("/app/sign-in")
        data = {"email": email, "password": password, "form_token": _form_token(form)}
        answer = client.post("/app/sign-in", data=data)
        assert answer.status_code == 303, answer.text
        yield client


def _form_token(page: httpx.Response) -> str:
    """The sign-in form's token (each showing of the form has a new one)."""
    token = re.search(r'name="form_token" value="([^"]+)"', page.text)
    assert token is not None
    return token.group(1)


def test_the_session_cookie_is_http_only_same_site_lax_and_secure_behind_https(web: Web) -> None:
    page = web.page()
    web.sign_in(page)
    (cookie,) = [c for c in page.context.cookies() if c["name"] == COOKIE]
    assert (cookie["httpOnly"], cookie["sameSite"], cookie["path"], cookie["secure"]) == (
        True,
        "Lax",
        "/app",
        False,
    )
    # No script can read it: the one cookie a script sees is the time zone (static/tz.js).
    assert [c.partition("=")[0] for c in page.evaluate("document.cookie").split("; ")] == ["casefile_tz"]
    # Behind a proxy that terminated HTTPS (X-Forwarded-Proto from a trusted proxy): Secure.
    form = httpx.get(web.root + "/app/sign-in", headers={"X-Forwarded-Proto": "https"})
    token = re.search(r'name="form_token" value="([^"]+)"', form.text)
    assert token is not None
    answer = httpx.post(
        web.root + "/app/sign-in",
        headers={"X-Forwarded-Proto": "https"},
        cookies={FORM_COOKIE: form.cookies[FORM_COOKIE]},
        data={"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD, "form_token": token.group(1)},
    )
    (set_cookie,) = [h for h in answer.headers.get_list("set-cookie") if h.startswith(COOKIE + "=")]
    assert {"HttpOnly", "Secure", "SameSite=lax", "Path=/app"} <= {p.strip() for p in set_cookie.split(";")}


def test_a_state_changing_request_without_the_csrf_token_is_refused(web: Web) -> None:
    with _signed_in_client(web.api, ADMIN_EMAIL, ADMIN_PASSWORD) as client:
        page = client.get("/app/matters/new")
        token = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
        assert token is not None
        body = {"title": "Forged matter", "action": "create"}
        for refused in (body, {**body, "csrf_token": "0" * 64}):
            answer = client.post("/app/matters/new", data=refused)
            assert answer.status_code == 403
            assert "did not come from this site" in answer.text
        assert client.post("/app/sign-out", data={}).status_code == 403
        with web.api.admin() as admin:
            assert admin.get("/cases", params={"search": "Forged"}).json()["data"] == []
        # With the token, the same form works.
        answer = client.post("/app/matters/new", data={**body, "csrf_token": token.group(1)})
        assert answer.status_code == 303
    # The sign-in form has its own token (login CSRF): a post without it is refused.
    answer = httpx.post(web.root + "/app/sign-in", data={"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD})
    assert answer.status_code == 403
    assert COOKIE not in answer.headers.get("set-cookie", "")


def test_pages_forbid_inline_script_and_framing(web: Web) -> None:
    answer = httpx.get(web.root + "/app/sign-in")
    csp = answer.headers["content-security-policy"]
    assert csp == CSP
    assert "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp and "script-src 'self'" in csp
    assert answer.headers["x-frame-options"] == "DENY"
    assert answer.headers["cache-control"] == "no-store"
    # No template holds an inline script, an event-handler attribute or a style attribute.
    for template in TEMPLATES.glob("*.html"):
        text = template.read_text()
        assert not re.search(r"<script(?![^>]*\bsrc=)", text), template.name
        assert not re.search(r"\son[a-z]+=|\sstyle=", text), template.name
    # A framing page gets nothing: the browser refuses to show the app in a frame.
    page = web.page()
    page.set_content(f'<iframe src="{web.root}/app/sign-in" title="framed"></iframe>')
    # The browser reports the refusal (a console message), and the frame stays empty.
    violation = wait_until(lambda: [v for v in CSP_VIOLATIONS if "frame-ancestors 'none'" in v])
    assert "Sign in to Casefile" not in page.frames[-1].content()
    CSP_VIOLATIONS.remove(violation[0])  # expected: not a fault of the pages


def test_static_files_are_fingerprinted_and_cached_for_a_year(web: Web) -> None:
    html = httpx.get(web.root + "/app/sign-in").text
    urls = re.findall(r'(?:href|src)="(/app/static/[^"]+)"', html)
    assert {u.rsplit(".", 1)[1] for u in urls} == {"css", "js"}
    for url in urls:
        assert re.fullmatch(r"/app/static/[a-z]+(\.min)?\.[0-9a-f]{12}\.(css|js)", url) or re.fullmatch(
            r"/app/static/htmx\.[0-9a-f]{12}\.min\.js", url
        ), url
        answer = httpx.get(web.root + url)
        assert answer.status_code == 200
        assert answer.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert httpx.get(web.root + "/app/static/app.000000000000.css").status_code == 404


def test_sign_out_disabling_and_a_role_change_end_the_session(web: Web) -> None:
    user, email = web.user("attorney")
    pages = [web.page() for _ in range(3)]
    for page in pages:
        web.sign_in(page, email, USER_PASSWORD)
    signed_out, disabled, changed = pages
    # Sign-out revokes the session: its cookie, replayed, no longer opens a page.
    cookie = next(c for c in signed_out.context.cookies() if c["name"] == COOKIE)
    signed_out.get_by_role("button", name="Sign out").click()
    expect(signed_out.get_by_text("You are signed out.")).to_be_visible()
    replay = httpx.get(web.root + "/app", cookies={COOKIE: cookie["value"]})
    assert replay.status_code == 303 and replay.headers["location"] == "/app/sign-in?next=/app"
    # A role change ends the other sessions of the user at once.
    with web.api.admin() as admin:
        assert admin.patch(f"/users/{user['id']}", json={"role": "paralegal"}).status_code == 200
    changed.goto("/app/matters")
    expect(changed).to_have_url(re.compile(r"/app/sign-in\?next=/app/matters$"))
    web.sign_in(changed, email, USER_PASSWORD)  # signing in again gives the new role
    expect(changed.locator(".role")).to_have_text("(Paralegal)")
    # Disabling: every session ends, and signing in is refused.
    with web.api.admin() as admin:
        assert admin.patch(f"/users/{user['id']}", json={"active": False}).status_code == 200
    for page in (disabled, changed):
        page.goto("/app")
        expect(page).to_have_url(re.compile(r"/app/sign-in\?next=/app$"))
    disabled.get_by_label("Email").fill(email)
    disabled.get_by_label("Password").fill(USER_PASSWORD)
    disabled.get_by_role("button", name="Sign in").click()
    expect(disabled.get_by_role("alert")).to_have_text("The user is disabled")


def test_an_idle_session_times_out(web: Web) -> None:
    page = web.page()
    web.sign_in(page)
    runtime = web.api.app.state.runtime
    cookie = next(c for c in page.context.cookies() if c["name"] == COOKIE)
    ticket = Ticket.open(runtime, cookie["value"])
    assert ticket is not None
    idle = web.api.settings.web_idle_seconds
    # The same session, its last request just past the idle time-out / just within it.
    now = time.time()
    stale = Ticket(ticket.session_id, ticket.user_id, ticket.role, now - idle - 5, now - idle - 1)
    fresh = Ticket(ticket.session_id, ticket.user_id, ticket.role, now - idle - 5, now - idle + 30)
    answer = httpx.get(web.root + "/app", cookies={COOKIE: stale.seal(runtime)})
    assert answer.status_code == 303 and answer.headers["location"].startswith("/app/sign-in")
    answer = httpx.get(web.root + "/app", cookies={COOKIE: fresh.seal(runtime)})
    assert answer.status_code == 200
    # A used session's idle clock is renewed: the answer carries a cookie with a new time.
    renewed = Ticket.open(runtime, answer.cookies[COOKIE])
    assert renewed is not None and renewed.seen >= now


def test_the_login_rate_limit_applies_to_the_form(backend: str, tmp_path: Path) -> None:
    with (
        server_with(backend, tmp_path, rate_limit_login="3/minute") as api,
        httpx.Client(base_url=api.root) as client,
    ):
        well_inside_a_minute()
        answer = client.get("/app/sign-in")  # 1 of 3
        for _ in range(2):  # 2 and 3: wrong passwords, the form again
            data = {"email": ADMIN_EMAIL, "password": "wrong", "form_token": _form_token(answer)}
            answer = client.post("/app/sign-in", data=data)
            assert answer.status_code == 401
            assert "Wrong email or password" in answer.text
        data = {"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD, "form_token": _form_token(answer)}
        limited = client.post("/app/sign-in", data=data)
        assert limited.status_code == 429
        assert "Too many requests" in limited.text and "retry-after" in limited.headers
        assert COOKIE not in limited.headers.get("set-cookie", "")
