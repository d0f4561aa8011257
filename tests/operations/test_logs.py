"""Logs (docs/operations.md#logs): one line per request, one traceback per unhandled error with its
request id, `CASEFILE_LOG_FORMAT=json`, quiet libraries."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from fastapi import FastAPI

from casefile.logs import JsonFormatter
from tests.support import plain
from tests.support.assertions import api_error, ok
from tests.support.processes import Process
from tests.support.servers import Api, make_settings, serving
from tests.support.waiting import wait_until


def add_failing_route(app: FastAPI) -> None:
    @app.get("/explode/{thing_id}")
    async def explode(thing_id: str) -> None:
        raise RuntimeError(f"boom {thing_id}")


def test_one_line_per_request_and_one_traceback_per_error(
    database: tuple[Path, str | None], caplog: pytest.LogCaptureFixture
) -> None:
    data_dir, url = database
    caplog.set_level(logging.INFO)
    # uvicorn's loggers do not propagate to the root (its own default config): watch them directly,
    # where a server logs a second "Exception in ASGI application".
    uvicorn_logger = logging.getLogger("uvicorn")
    uvicorn_logger.addHandler(caplog.handler)
    try:
        with serving(make_settings(data_dir, url), add_failing_route) as api:
            request_id = _exercise(api, caplog)
        # The server has stopped, and uvicorn stops only after its requests in progress have
        # ended: a second traceback, logged after the answer had gone, would be here by now.
        _one_traceback(caplog, request_id)
    finally:
        uvicorn_logger.removeHandler(caplog.handler)


def _exercise(api: Api, caplog: pytest.LogCaptureFixture) -> str:
    """One good and one failing request, each with its access line; the failing one's request id."""
    with api.admin() as admin:
        me = ok(admin.get("/users/me", headers={"X-Request-ID": "client-trace-1"}))
        r = plain.get(api.root + "/explode/x1", headers={"X-Request-ID": "client-trace-2"})
    api_error(r, 500, "INTERNAL_ERROR")
    request_id = r.headers["x-request-id"]
    assert r.json()["meta"]["request_id"] == request_id
    assert r.headers["x-client-request-id"] == "client-trace-2"  # like every other answer
    lines = [rec for rec in caplog.records if rec.name == "casefile.access"]
    [mine] = [rec for rec in lines if getattr(rec, "client_request_id", None) == "client-trace-1"]
    assert mine.route == "/api/v1/users/me" and mine.status == 200 and mine.principal_id == me["id"]  # type: ignore[attr-defined]
    assert mine.duration_ms >= 0  # type: ignore[attr-defined]
    [failed] = [rec for rec in lines if getattr(rec, "request_id", None) == request_id]
    assert failed.status == 500 and failed.route == "/explode/{thing_id}"  # type: ignore[attr-defined]
    return str(request_id)


def _one_traceback(caplog: pytest.LogCaptureFixture, request_id: str) -> None:
    tracebacks = [rec for rec in caplog.records if rec.exc_info and "boom x1" in str(rec.exc_info[1])]
    assert len(tracebacks) == 1, [(rec.name, rec.getMessage()) for rec in tracebacks]
    assert request_id in tracebacks[0].getMessage()
    as_json = json.loads(JsonFormatter().format(tracebacks[0]))
    assert as_json["level"] == "ERROR" and "RuntimeError: boom x1" in as_json["exc_info"]


def test_json_logs_of_a_real_server(database: tuple[Path, str | None], tmp_path: Path) -> None:
    data_dir, url = database
    log = tmp_path / "serve.log"
    server = Process("serve", make_settings(data_dir, url), log, log_format="json")
    try:
        r = plain.get(server.base + "/cases/case_abc")
        assert r.status_code == 401
        request_id = r.headers["x-request-id"]
        # The request's line is written once its answer has gone (its duration ends there): wait
        # for it before stopping the server, or a stop right after the answer can race it.
        wait_until(lambda: request_id in log.read_text(), timeout=15)
    finally:
        server.stop()
    entries = [
        json.loads(line) for line in log.read_text().splitlines() if line.strip()
    ]  # every line is JSON
    [line] = [e for e in entries if e.get("request_id") == request_id]
    assert line["route"] == "/api/v1/cases/{case_id}" and line["status"] == 401 and "duration_ms" in line
    assert not any(e["logger"].startswith(("httpx", "uvicorn.access")) for e in entries)
