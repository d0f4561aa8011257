"""The web app in a real browser: the operating system's Chromium (`apt-get install chromium`;
Playwright's own browser download is not used), driven by Playwright, against a test server of
each database. One browser per module; each test opens its own contexts (fresh cookies).
Screenshots for docs/web-app.md are taken on SQLite only (the pages are the same)."""

from __future__ import annotations

import os
import queue
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, sync_playwright

from tests.support.servers import ADMIN_EMAIL, ADMIN_PASSWORD, Api, running_server

CHROMIUM = os.environ.get("CASEFILE_TEST_CHROMIUM", "/usr/bin/chromium")
SCREENSHOTS = Path(__file__).parents[2] / "docs" / "web-app"
USER_PASSWORD = "User-Passw0rd-123"


# One browser per test module, not per run: the sync Playwright API keeps an event loop running
# in the tests' thread for as long as it is started, and the set-up of other tests (a fresh
# database, a server: `asyncio.run`) cannot run there meanwhile. Started per module, it is stopped
# before any other directory's tests run in the same process.
@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: apt-get install chromium (.ci/run does)")
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
    yield browser
    browser.close()


class Web:
    """The server's web app as a browser user sees it."""

    def __init__(self, api: Api, browser: Browser, backend: str) -> None:
        self.api, self.browser, self.backend = api, browser, backend
        self.root = api.root
        self._contexts: list[BrowserContext] = []

    def page(self, *, width: int = 1280, height: int = 800, javascript: bool = True) -> Page:
        context = self.browser.new_context(
            base_url=self.root, viewport={"width": width, "height": height}, java_script_enabled=javascript
        )
        self._contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(10_000)
        # Any script refused by the Content-Security-Policy is a bug of the pages.
        page.on("console", lambda m: _refuse_csp_violation(m.text))
        return page

    def sign_in(self, page: Page, email: str = ADMIN_EMAIL, password: str = ADMIN_PASSWORD) -> None:
        page.goto("/app/sign-in")
        page.get_by_label("Email").fill(email)
        page.get_by_label("Password").fill(password)
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url(re.compile(r".*/app$"))

    def user(self, role: str = "attorney") -> tuple[dict[str, str], str]:
        """A new user of `role` (created through the API) and their email."""
        user, _ = self.api.make_user(role, password=USER_PASSWORD)
        return user, user["email"]

    def screenshot(self, page: Page, name: str, *, full_page: bool = True) -> None:
        if self.backend == "sqlite":
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=full_page)

    def close(self) -> None:
        for context in self._contexts:
            context.close()


@contextmanager
def server_with(backend: str, tmp: Path, **overrides: Any) -> Iterator[Api]:
    """A server on a fresh database, started and stopped in a thread of its own: while the sync
    Playwright API is started, it keeps an event loop running in the tests' thread, where the
    server's set-up (`asyncio.run`) cannot run."""
    ready: queue.Queue[Api | BaseException] = queue.Queue()
    stop = threading.Event()

    def run() -> None:
        try:
            with running_server(backend, tmp, **overrides) as api:
                ready.put(api)
                stop.wait()
        except BaseException as exc:  # the test sees it
            ready.put(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    started = ready.get(timeout=60)
    if isinstance(started, BaseException):
        raise started
    try:
        yield started
    finally:
        stop.set()
        thread.join(timeout=60)


# axe-core's rules for WCAG 2.1 A and AA, and its best practices; only violations are collected.
AXE_OPTIONS = {
    "runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]},
    "resultTypes": ["violations"],
}


def serious_violations(page: Page) -> list[str]:
    """The serious and critical violations axe-core finds on the page, as readable lines."""
    results = Axe().run(page, options=AXE_OPTIONS).response
    assert results["testEngine"]["name"] == "axe-core" and results["url"] == page.url
    return [
        f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']]}"
        for v in results["violations"]
        if v["impact"] in ("serious", "critical")
    ]


CSP_VIOLATIONS: list[str] = []


def _refuse_csp_violation(text: str) -> None:
    if "Content Security Policy" in text:
        CSP_VIOLATIONS.append(text)


@pytest.fixture(scope="session")
def web_api(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    """The web tests' server, one per database, started in a thread (see `server_with`)."""
    with server_with(backend, tmp_path_factory.mktemp(f"web-{backend}")) as server:
        yield server


@pytest.fixture
def web(web_api: Api, browser: Browser, backend: str) -> Iterator[Web]:
    CSP_VIOLATIONS.clear()
    site = Web(web_api, browser, backend)
    yield site
    site.close()
    assert not CSP_VIOLATIONS, CSP_VIOLATIONS
