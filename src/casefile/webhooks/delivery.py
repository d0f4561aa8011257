"""Delivering one event to one webhook: claim, attempt, record (the lease: `casefile.worker.lease`).

- `claim_due` (one short transaction) picks due deliveries (`FOR UPDATE SKIP LOCKED` on PostgreSQL;
  SQLite's write transactions are exclusive), and for each bumps the fencing token, takes a lease
  longer than one attempt can last, reserves the next attempt number and records the attempt as
  started. A lease that ran out (its worker died) is taken over, and its attempt marked lost.
- `attempt` sends the signed body with no transaction open, under one hard time-out for the whole
  request, reading at most a few KiB of the answer.
- `record_batch` (one short transaction for any number of outcomes) writes each attempt's outcome,
  and updates each delivery only if the lease is still that claim's (fencing): success, a retry
  time, or the dead-letter status. The worker records every outcome that finished while the
  previous batch was committing in one go; `record` is the same for a single outcome.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

import httpx
from sqlalchemy import (
    BindParameter,
    Boolean,
    Integer,
    Row,
    String,
    Table,
    Text,
    TextClause,
    bindparam,
    func,
    select,
    text,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession

from casefile import __version__
from casefile.clock import format_timestamp, new_id, utcnow
from casefile.db import UTCDateTime
from casefile.models import Delivery, DeliveryAttempt, Event, Webhook
from casefile.runtime import Runtime
from casefile.secretbox import SecretBox
from casefile.webhooks.signing import signature_headers
from casefile.webhooks.ssrf import ForbiddenAddress, GuardedTransport
from casefile.worker.lease import LeaseClaim, backoff_seconds, leased_terms

MAX_DELAY_SECONDS = 3600
DELIVERY_DEADLINE = timedelta(hours=24)
RESPONSE_READ_LIMIT = 4096  # bytes of a receiver's answer we read at most
RESPONSE_KEEP = 1024  # of which we keep this much
LOST_ATTEMPT = "The worker stopped during this attempt (its lease ran out)"
_attempts = cast(Table, DeliveryAttempt.__table__)
_deliveries = cast(Table, Delivery.__table__)
_webhooks = cast(Table, Webhook.__table__)
_events = cast(Table, Event.__table__)
DueRow = Row[*tuple[Any, ...]]  # a row of `claim_due`'s SELECT


@dataclass(frozen=True, kw_only=True)
class Claim(LeaseClaim):
    delivery_id: str
    attempt_id: str
    webhook_id: str
    url: str
    secrets: tuple[str, ...]
    body: bytes
    event_id: str  # the payload's `id`: the Standard Webhooks `webhook-id`
    # With the lease's `max_attempts`, what `record` needs to decide the delivery's fate without
    # reading it again.
    first_attempt_at: datetime
    retry_policy: dict[str, Any]


@dataclass(frozen=True)
class Outcome:
    started_at: datetime
    duration_ms: int
    status_code: int | None
    error: str | None
    response_body: str | None

    @property
    def success(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def count_attempt(runtime: Runtime, outcome: Outcome) -> None:
    """The attempt in the process's metrics (docs/operations.md#metrics)."""
    runtime.metrics.delivery_attempts.labels("success" if outcome.success else "failure").inc()
    runtime.metrics.delivery_duration.observe(outcome.duration_ms / 1000)


def retry_delay(policy: Mapping[str, Any], attempt: int) -> float:
    """Seconds before attempt `attempt + 1`: exponential from `initial_delay`, ±20 % jitter, at
    most an hour (docs/api-conventions.md#delivery-and-retries)."""
    return backoff_seconds(
        attempt,
        initial=policy["initial_delay"],
        multiplier=policy["backoff_multiplier"],
        cap=MAX_DELAY_SECONDS,
    )


def signing_secrets(
    secret_sealed: str, previous_secrets: list[dict[str, Any]], box: SecretBox, now: datetime
) -> tuple[str, ...]:
    """The current secret, then any previous ones still inside their rotation grace period (a
    webhook's `secret_sealed` and `previous_secrets`)."""
    current = box.open(secret_sealed)
    previous = [
        box.open(entry["sealed"])
        for entry in previous_secrets
        if datetime.fromisoformat(entry["expires_at"]) > now
    ]
    return (current, *previous)


def payload_body(event: Event, *, webhook_id: str, delivery_id: str, attempt: int) -> bytes:
    metadata: dict[str, object] = {"webhook_id": webhook_id, "attempt": attempt, "delivery_id": delivery_id}
    if event.is_test:
        metadata["test"] = True
    payload = {
        "id": event.payload_id,
        "event": event.name,
        "timestamp": format_timestamp(event.occurred_at),
        "data": event.data,
        "metadata": metadata,
    }
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


def lease_seconds(runtime: Runtime) -> float:
    """Longer than any attempt can last, so a live worker never loses its claim mid-attempt."""
    settings = runtime.settings
    return settings.webhook_timeout_seconds + settings.worker_lease_margin_seconds


async def claim_due(
    session: AsyncSession,
    runtime: Runtime,
    *,
    limit: int,
    allowance: Mapping[str, int] | None = None,
    default_allowance: int | None = None,
    delivery_id: str | None = None,
) -> list[Claim]:
    """Claim up to `limit` due deliveries, at most `allowance[webhook]` (else `default_allowance`)
    per webhook; or exactly `delivery_id` (the test endpoint: its webhook may be inactive).

    A fixed number of statements whatever the batch's size (measured in bench/README.md,
    `webhook_workers.py`): the locking SELECT reads columns, not ORM objects; one UPDATE leases
    every taken row, one INSERT starts their attempts."""
    now = utcnow()
    d, w, e = _deliveries.c, _webhooks.c, _events.c
    statement = (
        select(
            d.id,
            d.webhook_id,
            d.attempts_made,
            d.max_attempts,
            d.lease_token,
            d.lease_expires_at,
            d.first_attempt_at,
            w.url,
            w.secret_sealed,
            w.previous_secrets,
            w.retry_policy,
            e.id.label("event_id"),
            e.name.label("event_name"),
            e.data,
            e.occurred_at,
            e.is_test,
        )
        .select_from(_deliveries.join(_webhooks, w.id == d.webhook_id).join(_events, e.id == d.event_id))
        .where(Delivery.due(now))
        .order_by(d.next_attempt_at)
        .limit(limit * 4 if default_allowance else limit)
        .with_for_update(of=_deliveries, skip_locked=True)
    )
    if delivery_id is not None:
        statement = statement.where(d.id == delivery_id)
    else:
        statement = statement.where(w.active.is_(True))
    rows = (await session.execute(statement)).all()
    remaining = dict(allowance or {})
    # First decide, in memory, which rows this claim takes (the allowance skips some) and which
    # have run out of attempts or time, so that the attempts left open by dead workers are closed
    # with one statement, before any new attempt exists.
    taken: list[DueRow] = []
    expired: list[DueRow] = []
    for row in rows:
        if len(taken) >= limit:
            break
        if default_allowance is not None:
            left = remaining.get(row.webhook_id, default_allowance)
            if left <= 0:
                continue  # this receiver has enough in flight; others go first
            remaining[row.webhook_id] = left - 1
        if row.attempts_made >= row.max_attempts or _past_deadline(row.first_attempt_at, now):
            expired.append(row)
        else:
            taken.append(row)
    lost = [row.id for row in (*expired, *taken) if row.lease_expires_at is not None]
    if lost:
        await _close_lost_attempts(session, lost, now)
    if expired:
        await session.execute(
            update(_deliveries)
            .where(d.id.in_([row.id for row in expired]))
            # The token is bumped as a take-over would: a lost claim's late outcome is fenced off.
            .values(status="dead", lease_expires_at=None, updated_at=now, lease_token=d.lease_token + 1)
        )
    if not taken:
        return []
    await session.execute(
        Delivery.take_leases([row.id for row in taken], now, lease_seconds(runtime)).values(
            first_attempt_at=func.coalesce(d.first_attempt_at, now), updated_at=now
        )
    )
    # A webhook's secrets are decrypted once per claim, not once per delivery (a Fernet
    # decryption each).
    secrets_of: dict[str, tuple[str, ...]] = {}
    claims: list[Claim] = []
    attempts: list[tuple[Any, ...]] = []
    for row in taken:
        terms = leased_terms(
            attempts_made=row.attempts_made, lease_token=row.lease_token, max_attempts=row.max_attempts
        )
        attempt_id = new_id("att")
        attempts.append((attempt_id, row.id, terms["attempt"], now))
        if row.webhook_id not in secrets_of:
            secrets_of[row.webhook_id] = signing_secrets(
                row.secret_sealed, row.previous_secrets, runtime.secret_box, now
            )
        event = Event(
            id=row.event_id,
            name=row.event_name,
            data=row.data,
            occurred_at=row.occurred_at,
            is_test=row.is_test,
        )
        claims.append(
            Claim(
                **terms,
                delivery_id=row.id,
                attempt_id=attempt_id,
                webhook_id=row.webhook_id,
                url=row.url,
                secrets=secrets_of[row.webhook_id],
                event_id=event.payload_id,
                first_attempt_at=row.first_attempt_at or now,
                retry_policy=row.retry_policy,
                body=payload_body(
                    event, webhook_id=row.webhook_id, delivery_id=row.id, attempt=terms["attempt"]
                ),
            )
        )
    await session.execute(_start_attempts(len(attempts)), _row_params("a", _ATTEMPT_START, attempts))
    return claims


def _past_deadline(first_attempt_at: datetime | None, now: datetime) -> bool:
    return first_attempt_at is not None and now > first_attempt_at + DELIVERY_DEADLINE


async def _close_lost_attempts(session: AsyncSession, delivery_ids: list[str], now: datetime) -> None:
    """The attempts that workers whose lease ran out left unfinished."""
    await session.execute(
        update(DeliveryAttempt)
        .where(DeliveryAttempt.delivery_id.in_(delivery_ids), DeliveryAttempt.finished_at.is_(None))
        .values(finished_at=now, success=False, error=LOST_ATTEMPT)
        .execution_options(synchronize_session=False)
    )


def delivery_client(*, allow_private: bool, max_connections: int) -> httpx.AsyncClient:
    """The one kind of client deliveries go through (the worker's and the test endpoint's), each on
    its own `GuardedTransport` so the SSRF guard checks every connection. `timeout=None`: `attempt`
    runs each request under one hard time-out, the configured `webhook_timeout_seconds`, for the
    whole request; httpx's own 5 s default would cut it short."""
    return httpx.AsyncClient(
        transport=GuardedTransport(allow_private=allow_private, max_connections=max_connections),
        follow_redirects=False,
        timeout=None,  # noqa: S113
    )


async def attempt(client: httpx.AsyncClient, claim: Claim, timeout: float) -> Outcome:
    """POST the signed body once. Never raises for the receiver's failures: they are the outcome."""
    started_at = utcnow()
    # Timed on the event loop's clock, the one the time-out runs on: uvloop's `time()` is cached per
    # loop turn, so `time.monotonic()` could show a cut-off attempt lasting a little under it.
    loop = asyncio.get_running_loop()
    clock = loop.time()
    headers = {
        "Content-Type": "application/json",
        "User-Agent": f"casefile-webhooks/{__version__}",
        **signature_headers(claim.body, claim.secrets, message_id=claim.event_id),
    }
    status_code: int | None = None
    error: str | None = None
    head = b""
    request: httpx.Request | None
    try:
        # Registration refuses such URLs (`ssrf.parse_url`); one stored before that rule, or by
        # hand, is this attempt's failure, not the worker's.
        request = client.build_request("POST", claim.url, content=claim.body, headers=headers)
    except (httpx.InvalidURL, ValueError) as exc:
        request, error = None, f"The URL cannot be used: {exc}"
    try:
        async with asyncio.timeout(timeout):
            if request is not None:
                response = await client.send(request, stream=True)  # as `client.stream` does
                try:
                    status_code = response.status_code
                    async for chunk in response.aiter_raw():
                        head += chunk
                        if len(head) >= RESPONSE_READ_LIMIT:
                            break
                finally:
                    await response.aclose()
    except TimeoutError:
        error = f"No complete response within {timeout:g} s"
    except httpx.HTTPError as exc:
        if isinstance(exc.__cause__, ForbiddenAddress):  # httpx wraps the transport's exception
            error = f"Refused: {exc.__cause__}"
        else:
            error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if error is None and status_code is not None and not 200 <= status_code < 300:
        error = "Redirects are not followed" if 300 <= status_code < 400 else f"HTTP {status_code}"
    return Outcome(
        started_at=started_at,
        duration_ms=round((loop.time() - clock) * 1000),
        status_code=status_code,
        error=error,
        response_body=head[:RESPONSE_KEEP].decode("utf-8", "replace") if head else None,
    )


# The statements that claim and record a batch, whatever its size, join or insert a table of rows
# given as VALUES. SQLAlchemy does not cache the compilation of a VALUES construct (it compiled
# one per batch: a tenth of the worker's CPU), so they are SQL text, made once per row count and
# cached by SQLAlchemy like any text (which holds column and parameter names only, never values:
# the `noqa: S608` below); every parameter is typed, so a column that is NULL on every
# row keeps its type on PostgreSQL and datetimes are stored as the ORM stores them.
Columns = tuple[tuple[str, Any], ...]
_ATTEMPT_START: Columns = (
    ("id", String()),
    ("delivery_id", String()),
    ("number", Integer()),
    ("started_at", UTCDateTime()),
)
_FATE: Columns = (
    ("id", String()),
    ("lease_token", Integer()),
    ("status", String()),
    ("next_attempt_at", UTCDateTime()),
    ("status_code", Integer()),
    ("error", Text()),
)
_RESULT: Columns = (
    ("id", String()),
    ("duration_ms", Integer()),
    ("status_code", Integer()),
    ("success", Boolean()),
    ("error", Text()),
    ("response_body", Text()),
)


def _rows_sql(prefix: str, columns: Columns, n: int) -> tuple[str, list[BindParameter[Any]]]:
    """`(:p0_a, :p0_b), (:p1_a, :p1_b)...` for `n` rows, with its typed parameters."""
    names = [[f"{prefix}{i}_{name}" for name, _ in columns] for i in range(n)]
    sql = ", ".join("(" + ", ".join(f":{name}" for name in row) + ")" for row in names)
    binds = [
        bindparam(name, type_=type_) for row in names for name, (_, type_) in zip(row, columns, strict=True)
    ]
    return sql, binds


def _row_params(prefix: str, columns: Columns, rows: list[tuple[Any, ...]]) -> dict[str, Any]:
    return {
        f"{prefix}{i}_{name}": value
        for i, row in enumerate(rows)
        for (name, _), value in zip(columns, row, strict=True)
    }


@functools.lru_cache(maxsize=128)
def _start_attempts(n: int) -> TextClause:
    rows, binds = _rows_sql("a", _ATTEMPT_START, n)
    sql = f"INSERT INTO delivery_attempts (id, delivery_id, number, started_at) VALUES {rows}"  # noqa: S608
    return text(sql).bindparams(*binds)


@functools.lru_cache(maxsize=128)
def _record_fates(n: int) -> TextClause:
    """Each delivery's next state, only where its lease is still the claim's (fencing)."""
    rows, binds = _rows_sql("f", _FATE, n)
    return text(
        f"WITH fate ({', '.join(name for name, _ in _FATE)}) AS (VALUES {rows}) "  # noqa: S608
        "UPDATE deliveries SET status = fate.status, lease_expires_at = NULL, "
        "last_status_code = fate.status_code, last_error = fate.error, updated_at = :now, "
        "succeeded_at = CASE WHEN fate.status = 'succeeded' THEN :now ELSE deliveries.succeeded_at END, "
        "next_attempt_at = COALESCE(fate.next_attempt_at, deliveries.next_attempt_at) "
        "FROM fate WHERE deliveries.id = fate.id AND deliveries.lease_token = fate.lease_token"
    ).bindparams(*binds, bindparam("now", type_=UTCDateTime()))


@functools.lru_cache(maxsize=128)
def _record_results(n: int) -> TextClause:
    rows, binds = _rows_sql("r", _RESULT, n)
    return text(
        f"WITH result ({', '.join(name for name, _ in _RESULT)}) AS (VALUES {rows}) "  # noqa: S608
        "UPDATE delivery_attempts SET finished_at = :now, duration_ms = result.duration_ms, "
        "status_code = result.status_code, success = result.success, error = result.error, "
        "response_body = result.response_body FROM result WHERE delivery_attempts.id = result.id"
    ).bindparams(*binds, bindparam("now", type_=UTCDateTime()))


async def record_batch(runtime: Runtime, outcomes: list[tuple[Claim, Outcome]]) -> None:
    """Write the outcomes of several attempts in one transaction of two statements, whatever their
    number: each delivery's next state (success, a retry time, or the dead-letter status), fenced by
    its claim's lease token (a claim that lost its lease changes nothing of its delivery), then each
    attempt row by its id. Either all are recorded or none is."""
    if not outcomes:
        return
    now = utcnow()
    fates: list[tuple[Any, ...]] = []
    results: list[tuple[Any, ...]] = []
    # Rows in delivery-id order, so two batches that share rows (only a stale claim and its
    # take-over can) rarely deadlock; the worker retries a failed batch one outcome at a time.
    for claim, outcome in sorted(outcomes, key=lambda item: item[0].delivery_id):
        status, next_at = "succeeded", None
        if not outcome.success:
            next_at = now + timedelta(seconds=retry_delay(claim.retry_policy, claim.attempt))
            if claim.attempt >= claim.max_attempts or next_at > claim.first_attempt_at + DELIVERY_DEADLINE:
                status, next_at = "dead", None
            else:
                status = "retrying"
        fates.append(
            (claim.delivery_id, claim.lease_token, status, next_at, outcome.status_code, outcome.error)
        )
        results.append(
            (
                claim.attempt_id,
                outcome.duration_ms,
                outcome.status_code,
                outcome.success,
                outcome.error,
                outcome.response_body,
            )
        )
    n = len(outcomes)
    async with runtime.db.transaction(write=True) as session:
        # Deliveries first, then attempts: a concurrent claim locks a delivery and then updates its
        # lost attempt, so taking the locks in the same order means the two never deadlock.
        await session.execute(_record_fates(n), {"now": now, **_row_params("f", _FATE, fates)})
        await session.execute(_record_results(n), {"now": now, **_row_params("r", _RESULT, results)})


async def record(runtime: Runtime, claim: Claim, outcome: Outcome) -> None:
    """Write one attempt's outcome (see `record_batch`)."""
    await record_batch(runtime, [(claim, outcome)])
