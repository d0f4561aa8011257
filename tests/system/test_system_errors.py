"""`system.error`: an unhandled error emits one event a minute per error, without secrets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi import FastAPI

from tests.support import plain
from tests.support.assertions import api_error, ok
from tests.support.receivers import receiver_server
from tests.support.servers import redis_available, serving, shared_settings
from tests.support.waiting import wait_until


def add_failing_routes(app: FastAPI) -> None:
    @app.get("/explode/{thing_id}")
    async def explode(thing_id: str) -> None:
        raise RuntimeError(f"database password is hunter2 ({thing_id})")

    @app.get("/divide")
    async def divide() -> float:
        return 1 / 0


def test_an_unhandled_error_emits_system_error_once_a_minute(make_server) -> None:
    server = make_server(app_hook=add_failing_routes)
    with receiver_server() as receiver, server.admin() as admin:
        hook = {"name": "ops", "url": receiver.url, "events": ["system.*"], "secret": "s" * 24}
        ok(admin.post("/admin/webhooks", json=hook), 201)
        first = plain.get(server.root + "/explode/one")
        api_error(first, 500, "INTERNAL_ERROR")
        # The same error on another id, within the minute: answered the same, not announced again.
        for thing in ("two", "three"):
            api_error(plain.get(server.root + f"/explode/{thing}"), 500, "INTERNAL_ERROR")
        api_error(plain.get(server.root + "/divide"), 500, "INTERNAL_ERROR")  # a different error

        events = wait_until(lambda: (e := server.events("system.error")) and len(e) >= 2 and e, timeout=10)
        assert len(events) == 2
        exploded, divided = events
        assert exploded["request_id"] == first.headers["x-request-id"]
        assert (exploded["method"], exploded["path"], exploded["error_type"]) == (
            "GET",
            "/explode/one",
            "RuntimeError",
        )
        assert divided["error_type"] == "ZeroDivisionError" and divided["path"] == "/divide"
        assert exploded["fingerprint"] != divided["fingerprint"]

        delivered = receiver.wait_for(count=2, event="system.error")
        assert all("hunter2" not in json.dumps(r.json()) for r in delivered)
        assert "hunter2" not in json.dumps(server.events("system.error"))


@pytest.mark.skipif(not redis_available(), reason="Redis is not reachable (CI requires it)")
def test_with_redis_the_minute_holds_across_processes(
    database: tuple[Path, str | None], tmp_path: Path
) -> None:
    settings = shared_settings(database)
    with serving(settings, add_failing_routes) as one, serving(settings, add_failing_routes) as two:
        for server in (one, two, one, two):
            api_error(plain.get(server.root + "/explode/x"), 500, "INTERNAL_ERROR")
        wait_until(lambda: one.events("system.error"), timeout=10)
    # Both servers have stopped, and a server stops only after its reports in progress have been
    # written or dropped (ErrorReporter.aclose): every report has been decided, none is on its way.
    assert len(one.events("system.error")) == 1
