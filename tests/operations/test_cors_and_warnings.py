"""CORS is off unless `CASEFILE_CORS_ORIGINS` lists origins; development settings are announced
loudly at start-up."""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.support import plain
from tests.support.processes import CASEFILE, settings_env
from tests.support.servers import Api, free_port, make_settings

APP = "https://app.example.com"
PREFLIGHT = {
    "Origin": APP,
    "Access-Control-Request-Method": "PATCH",
    "Access-Control-Request-Headers": "Authorization",
}


def test_cors_is_off_by_default(api: Api) -> None:
    r = plain.get(api.base + "/cases", headers={"Origin": APP})
    assert "access-control-allow-origin" not in r.headers
    r = httpx.options(api.base + "/cases", headers=PREFLIGHT)
    assert r.status_code == 405 and "access-control-allow-origin" not in r.headers


def test_listed_origins_may_call_the_api(make_server) -> None:
    api = make_server(cors_origins=f"{APP}, https://other.example.com")
    r = httpx.options(api.base + "/cases", headers=PREFLIGHT)
    assert r.status_code == 200
    assert r.headers["access-control-allow-origin"] == APP
    assert "PATCH" in r.headers["access-control-allow-methods"]
    assert "authorization" in r.headers["access-control-allow-headers"].lower()
    with api.admin() as admin:
        r = admin.get("/cases", headers={"Origin": APP})
    assert r.status_code == 200 and r.headers["access-control-allow-origin"] == APP
    assert "x-request-id" in r.headers["access-control-expose-headers"].lower()
    r = plain.get(api.base + "/cases", headers={"Origin": "https://evil.example.com"})
    assert "access-control-allow-origin" not in r.headers


def test_private_webhook_urls_are_announced(make_server, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    make_server(webhook_allow_private_urls=True)
    assert any("CASEFILE_WEBHOOK_ALLOW_PRIVATE_URLS" in r.getMessage() for r in caplog.records)


def test_plain_http_on_a_public_address_is_announced(
    database: tuple[Path, str | None], tmp_path: Path
) -> None:
    data_dir, url = database
    env = settings_env(make_settings(data_dir, url))
    # The warning comes before the server binds; it is then stopped at once.
    seen = ""
    with subprocess.Popen(
        [CASEFILE, "serve", "--host", "0.0.0.0", "--port", str(free_port())],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    ) as proc:
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                seen += line
                if "DEVELOPMENT SETUP" in line or "Application startup complete" in line:
                    break
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    assert "DEVELOPMENT SETUP: serving plain HTTP on 0.0.0.0" in seen, seen
