"""Load shedding (docs/operations.md#load-shedding): past `max_concurrent_requests` requests wait
for a turn; one that finds `max_queued_requests` waiting, or that has waited
`max_queue_wait_seconds`, is answered 503 `OVERLOADED` with `Retry-After` at once, and counted in
`/metrics`. Health checks and `/metrics` are never queued.

A test route holds its turn until the test lets it go, so the server is busy exactly when the test
says (no timing guesses); every other request is a real one."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import anyio.to_thread
import httpx
from fastapi import FastAPI

from casefile.settings import Settings
from tests.support.assertions import api_error, ok
from tests.support.servers import Api
from tests.support.waiting import wait_until

from ..operations.test_metrics import scrape, value


class Holder:
    """A route, `/api/v1/_hold`, whose requests stay in progress until `release()`."""

    def __init__(self) -> None:
        self.entered = 0
        self.gate = threading.Event()

    def install(self, app: FastAPI) -> None:
        @app.get("/api/v1/_hold")
        async def hold() -> dict[str, str]:
            self.entered += 1
            await anyio.to_thread.run_sync(self.gate.wait, 30)
            return {"held": "done"}

    def release(self) -> None:
        self.gate.set()


def test_defaults() -> None:
    settings = Settings(_env_file=None)
    assert settings.max_queue_wait_seconds == 5
    assert (settings.max_concurrent_requests, settings.max_queued_requests) == (16, 16)


def test_a_full_queue_and_a_long_wait_are_answered_503_at_once_and_counted(make_server: Any) -> None:
    holder = Holder()
    api: Api = make_server(
        app_hook=holder.install,
        max_concurrent_requests=2,
        max_queued_requests=2,
        max_queue_wait_seconds=1.5,
        overload_retry_after_seconds=3,
    )
    token = api.admin_token  # signed in before the server is busy
    before = scrape(api)

    def timed(call: Callable[[], httpx.Response]) -> tuple[httpx.Response, float]:
        started = time.monotonic()
        response = call()
        return response, time.monotonic() - started

    with ThreadPoolExecutor(8) as pool, api.client(token=token) as client:
        holding = [pool.submit(timed, lambda: client.get("/_hold")) for _ in range(2)]
        wait_until(lambda: holder.entered == 2)
        queued: list[Future[tuple[httpx.Response, float]]] = [
            pool.submit(timed, lambda: client.get("/cases")) for _ in range(2)
        ]
        wait_until(
            lambda: value(scrape(api)["casefile_http_requests_queued"], "casefile_http_requests_queued") == 2
        )

        # The queue is full: the next request is turned away at once.
        refused, took = timed(lambda: client.get("/cases"))
        error = api_error(refused, 503, "OVERLOADED")
        assert "Retry-After" in error["message"] and refused.headers["retry-after"] == "3"
        assert took < 1.0
        ok(httpx.get(api.root + "/healthz"))  # never queued

        # The queued ones wait their 1.5 s, then are answered 503 too: the holders still hold.
        for future in queued:
            response, waited = future.result(timeout=30)
            api_error(response, 503, "OVERLOADED")
            assert 1.4 < waited < 5, waited

        holder.release()
        for future in holding:
            assert future.result(timeout=30)[0].json() == {"held": "done"}
        ok(client.get("/cases"))  # turns are free again

    after = scrape(api)["casefile_http_requests_shed"]
    shed = before["casefile_http_requests_shed"]
    name = "casefile_http_requests_shed_total"
    assert value(after, name, reason="queue_full") - value(shed, name, reason="queue_full") == 1
    assert value(after, name, reason="waited_too_long") - value(shed, name, reason="waited_too_long") == 2


def test_a_waiting_request_gets_the_next_free_turn(make_server: Any) -> None:
    holder = Holder()
    api: Api = make_server(
        app_hook=holder.install, max_concurrent_requests=1, max_queued_requests=5, max_queue_wait_seconds=20
    )
    token = api.admin_token
    with ThreadPoolExecutor(4) as pool, api.client(token=token) as client:
        held = pool.submit(client.get, "/_hold")
        wait_until(lambda: holder.entered == 1)
        waiting = pool.submit(client.get, "/users/me")
        wait_until(
            lambda: value(scrape(api)["casefile_http_requests_queued"], "casefile_http_requests_queued") == 1
        )
        assert not waiting.done()
        holder.release()
        assert held.result(timeout=30).status_code == 200
        ok(waiting.result(timeout=30))


def test_the_openapi_document_says_so(api: Api) -> None:
    doc = httpx.get(api.root + "/openapi.json", timeout=30).json()
    cases = doc["paths"]["/api/v1/cases"]["get"]["responses"]["503"]
    assert "OVERLOADED" in cases["description"] and "Retry-After" in cases["headers"]
    assert "503" not in doc["paths"]["/healthz"]["get"]["responses"]
    # And the audit log's consistency proof documents its 404 (a size without a signed head).
    proof = doc["paths"]["/api/v1/audit/consistency-proof"]["get"]["responses"]
    assert "404" in proof and "signed" in proof["404"]["description"]
