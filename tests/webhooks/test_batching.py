"""The worker's batched parts: outcomes recorded together (and still fenced), the outcome
recorder's isolation of a bad row, and HTTP clients that share the worker's connections."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update

from casefile.models import Delivery
from casefile.settings import Settings
from casefile.startup import start_runtime
from casefile.webhooks import recording
from casefile.webhooks.claims import LOST_ATTEMPT, claim_due
from casefile.webhooks.delivery import Claim, Outcome
from casefile.webhooks.recording import record_batch
from casefile.webhooks.ssrf import GuardedTransport
from casefile.webhooks.worker import HttpClients, OutcomeRecorder
from tests.support.assertions import ok
from tests.support.servers import Api, fresh_database, make_settings, serving

SECRET = "whsec_batching_0123456789"


@pytest.fixture
def server(backend: str, tmp_path: Path) -> Iterator[Api]:
    """A fresh database with its server, and no worker: the test claims and records itself."""
    data_dir = tmp_path / "data"
    with (
        fresh_database(backend, data_dir) as url,
        serving(make_settings(data_dir, url, worker_enabled=False)) as api,
    ):
        yield api


def outcome(status_code: int | None, error: str | None = None) -> Outcome:
    return Outcome(
        started_at=datetime.now(UTC), duration_ms=5, status_code=status_code, error=error, response_body="ok"
    )


def test_a_stale_outcome_recorded_in_a_batch_changes_nothing(server: Api) -> None:
    """Two outcomes in one batch: the one whose claim lost its lease (taken over by a new claim)
    leaves its delivery to the new claim; the other is recorded."""
    with server.admin() as admin:
        body = {
            "name": "batch",
            "url": "http://127.0.0.1:9/hook",
            "events": ["case.created"],
            "secret": SECRET,
            "retry_policy": {"max_attempts": 5, "initial_delay": 60, "backoff_multiplier": 1},
        }
        ok(admin.post("/admin/webhooks", json=body), 201)
        for title in ("Stale", "Fresh"):
            ok(admin.post("/cases", json={"title": title}), 201)

    async def scenario() -> tuple[str, str]:
        runtime = start_runtime(server.settings)
        try:
            async with runtime.db.transaction() as session:
                first, other = await claim_due(session, runtime, limit=2)
            # `first`'s worker is presumed dead: its lease runs out and another claim takes over.
            async with runtime.db.transaction() as session:
                await session.execute(
                    update(Delivery)
                    .where(Delivery.id == first.delivery_id)
                    .values(lease_expires_at=datetime.now(UTC) - timedelta(seconds=1))
                )
            async with runtime.db.transaction() as session:
                [takeover] = await claim_due(session, runtime, limit=1, delivery_id=first.delivery_id)
            assert takeover.lease_token == first.lease_token + 1 and takeover.attempt == 2
            await record_batch(runtime, [(first, outcome(200)), (other, outcome(500, "HTTP 500"))])
            return first.delivery_id, other.delivery_id
        finally:
            await runtime.close()

    stale_id, other_id = asyncio.run(scenario())
    rows = {
        r[0]: r[1:]
        for r in server.sql(
            "SELECT id, status, attempts_made, lease_expires_at IS NOT NULL, last_status_code, "
            "next_attempt_at > :soon FROM deliveries",
            soon=datetime.now(UTC).replace(tzinfo=None) + timedelta(seconds=30),
        )
    }
    # The stale success did not touch the delivery: still leased by the take-over, nothing recorded.
    assert rows[stale_id] == ("pending", 2, True, None, False)
    # The other outcome in the same batch was recorded: a retry a minute (±20 %) later.
    assert rows[other_id] == ("retrying", 1, False, 500, True)
    attempts = server.sql(
        "SELECT number, finished_at IS NOT NULL, success, error FROM delivery_attempts "
        "WHERE delivery_id = :d ORDER BY number",
        d=stale_id,
    )
    # Attempt rows are fenced too: the late outcome of attempt 1 leaves the "interrupted" record
    # the take-over gave it; attempt 2 is still running.
    assert [(n, bool(f), s, e) for n, f, s, e in attempts] == [
        (1, True, False, LOST_ATTEMPT),
        (2, False, None, None),
    ]


def test_a_batch_of_every_kind_of_outcome_is_recorded_in_one_go(server: Api) -> None:
    """Success, retry and dead letter in one batch, then a batch where every attempt failed to
    connect (no status code and no response on any row: the batch's columns that are NULL on every
    row must still be stored as such): each delivery and attempt gets its own outcome."""
    with server.admin() as admin:
        body = {
            "name": "kinds",
            "url": "http://127.0.0.1:9/hook",
            "events": ["case.created"],
            "secret": SECRET,
            "retry_policy": {"max_attempts": 2, "initial_delay": 60, "backoff_multiplier": 1},
        }
        ok(admin.post("/admin/webhooks", json=body), 201)
        for title in ("One", "Two", "Three", "Four", "Five"):
            ok(admin.post("/cases", json={"title": title}), 201)

    refused = Outcome(
        started_at=datetime.now(UTC),
        duration_ms=1,
        status_code=None,
        error="ConnectError",
        response_body=None,
    )

    async def scenario() -> list[str]:
        runtime = start_runtime(server.settings)
        try:
            async with runtime.db.transaction() as session:
                claims = await claim_due(session, runtime, limit=5)
            assert [c.attempt for c in claims] == [1] * 5
            dead = dataclasses.replace(claims[2], attempt=2)  # as if it were its last attempt
            await record_batch(
                runtime,
                [
                    (claims[0], outcome(200)),
                    (claims[1], outcome(500, "HTTP 500")),
                    (dead, outcome(410, "HTTP 410")),
                ],
            )
            await record_batch(runtime, [(claims[3], refused), (claims[4], refused)])
            return [c.delivery_id for c in claims]
        finally:
            await runtime.close()

    ids = asyncio.run(scenario())
    rows = {
        r[0]: r[1:]
        for r in server.sql(
            "SELECT id, status, last_status_code, last_error, lease_expires_at IS NULL, "
            "succeeded_at IS NOT NULL, next_attempt_at > :soon FROM deliveries",
            soon=datetime.now(UTC).replace(tzinfo=None) + timedelta(seconds=30),
        )
    }
    assert [rows[i] for i in ids] == [
        ("succeeded", 200, None, True, True, False),
        ("retrying", 500, "HTTP 500", True, False, True),
        ("dead", 410, "HTTP 410", True, False, False),
        ("retrying", None, "ConnectError", True, False, True),
        ("retrying", None, "ConnectError", True, False, True),
    ]
    attempts = {
        r[0]: r[1:]
        for r in server.sql(
            "SELECT delivery_id, number, finished_at IS NOT NULL, status_code, success, error, response_body "
            "FROM delivery_attempts"
        )
    }
    assert [attempts[i] for i in ids] == [
        (1, True, 200, True, None, "ok"),
        (1, True, 500, False, "HTTP 500", "ok"),
        (1, True, 410, False, "HTTP 410", "ok"),
        (1, True, None, False, "ConnectError", None),
        (1, True, None, False, "ConnectError", None),
    ]


def fake_claim(delivery_id: str) -> Claim:
    return Claim(
        delivery_id=delivery_id,
        lease_token=1,
        attempt_id=f"att_{delivery_id}",
        attempt=1,
        webhook_id="wh_x",
        url="http://127.0.0.1:9/",
        secrets=(SECRET,),
        body=b"{}",
        event_id=f"webhook_{delivery_id}",
        max_attempts=3,
        first_attempt_at=datetime.now(UTC),
        retry_policy={"initial_delay": 1, "backoff_multiplier": 1},
    )


def test_one_bad_outcome_does_not_fail_the_rest_of_its_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch whose transaction fails is recorded again one outcome at a time: only the bad one
    fails (and its lease will run out), the others are committed."""
    batches: list[list[str]] = []

    async def record_batch(runtime: Any, outcomes: list[tuple[Claim, Outcome]]) -> None:
        ids = [claim.delivery_id for claim, _ in outcomes]
        batches.append(ids)
        if "bad" in ids:
            raise RuntimeError("cannot store this row")

    monkeypatch.setattr(recording, "record_batch", record_batch)

    async def scenario() -> list[BaseException | None]:
        recorder = OutcomeRecorder(runtime=None)  # type: ignore[arg-type]
        task = asyncio.create_task(recorder.run())
        try:
            return await asyncio.gather(
                *(recorder.record(fake_claim(d), outcome(200)) for d in ("a", "bad", "c")),
                return_exceptions=True,
            )
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    results = asyncio.run(scenario())
    assert results[0] is None and results[2] is None and isinstance(results[1], RuntimeError)
    assert batches == [["a", "bad", "c"], ["a"], ["bad"], ["c"]]


def test_http_clients_always_have_a_free_connection() -> None:
    """The worker's requests are spread over several guarded pools so that, with at most
    `concurrency` in flight, a request never waits for a connection behind other receivers'."""
    settings = Settings(_env_file=None, webhook_allow_private_urls=False)

    async def scenario() -> None:
        http = HttpClients(settings, concurrency=10, n=4)
        try:
            for client in http.clients:
                transport = client._transport
                assert isinstance(transport, GuardedTransport)
                assert transport._pool._max_connections == 3  # ceil(10 / 4)
                assert transport._pool._network_backend.allow_private is False
            async with contextlib.AsyncExitStack() as stack:
                for _ in range(10):
                    await stack.enter_async_context(http.lease())
                    assert max(http.busy) <= 3
                assert sum(http.busy) == 10
            assert http.busy == [0, 0, 0, 0]
        finally:
            await http.aclose()

    asyncio.run(scenario())
