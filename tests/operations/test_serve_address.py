"""`casefile serve` says where the web app is, and that address answers with its sign-in page."""

from __future__ import annotations

from pathlib import Path

import httpx

from casefile.cli import app_address
from tests.support.processes import Process
from tests.support.servers import make_settings
from tests.support.waiting import wait_until


def test_serve_prints_the_web_apps_address(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "data", None)
    log = tmp_path / "serve.log"
    server = Process("serve", settings, log)
    try:
        address = f"http://127.0.0.1:{server.port}/app"
        wait_until(lambda: f"open {address} (the web app)" in log.read_text())
        page = httpx.get(address, follow_redirects=True)
        assert page.status_code == 200 and "Sign in to Casefile" in page.text
        assert str(page.url).startswith(address + "/sign-in")
        root = httpx.get(f"http://127.0.0.1:{server.port}/")
        assert root.status_code == 307 and root.headers["location"] == "/app"
    finally:
        server.stop()


def test_the_address_is_one_a_browser_on_the_machine_can_open() -> None:
    assert app_address("0.0.0.0", 8000, tls=False) == "http://127.0.0.1:8000/app"
    assert app_address("::", 8000, tls=True) == "https://[::1]:8000/app"
    assert app_address("::1", 443, tls=True) == "https://[::1]:443/app"
    assert app_address("casefile.example", 8443, tls=True) == "https://casefile.example:8443/app"
