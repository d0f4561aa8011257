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
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

import httpx
from sqlalchemy import Table, bindparam, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from casefile import __version__
from casefile.clock import format_timestamp, new_id, utcnow
from casefile.events.models import Event
from casefile.runtime import Runtime
from casefile.secretbox import SecretBox
from casefile.webhooks.models import Delivery, DeliveryAttempt, Webhook
from casefile.webhooks.signing import signature_headers
from casefile.webhooks.ssrf import ForbiddenAddress, GuardedTransport
from casefile.worker.lease import LeaseClaim, backoff_seconds

MAX_DELAY_SECONDS = 3600
DELIVERY_DEADLINE = timedelta(hours=24)
RESPONSE_READ_LIMIT = 4096  # bytes of a receiver's answer we read at most
RESPONSE_KEEP = 1024  # of which we keep this much
LOST_ATTEMPT = "The worker stopped during this attempt (its lease ran out)"


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


def signing_secrets(webhook: Webhook, box: SecretBox, now: datetime) -> tuple[str, ...]:
    """The current secret, then any previous ones still inside their rotation grace period."""
    current = box.open(webhook.secret_sealed)
    previous = [
        box.open(entry["sealed"])
        for entry in webhook.previous_secrets
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
    allowance: dict[str, int] | None = None,
    default_allowance: int | None = None,
    delivery_id: str | None = None,
) -> list[Claim]:
    """Claim up to `limit` due deliveries, at most `allowance[webhook]` (else `default_allowance`)
    per webhook; or exactly `delivery_id` (the test endpoint: its webhook may be inactive)."""
    now = utcnow()
    statement = (
        select(Delivery, Webhook)
        .join(Webhook, Webhook.id == Delivery.webhook_id)
        .where(Delivery.due(now))
        .order_by(Delivery.next_attempt_at)
        .limit(limit * 4 if default_allowance else limit)
        .with_for_update(of=Delivery, skip_locked=True)
    )
    if delivery_id is not None:
        statement = statement.where(Delivery.id == delivery_id)
    else:
        statement = statement.where(Webhook.active.is_(True))
    rows = (await session.execute(statement)).unique().all()
    remaining = dict(allowance or {})
    # First decide, in memory, which rows this claim takes (the allowance skips some) and which
    # have run out of attempts or time, so that the attempts left open by dead workers are closed
    # with one statement, before any new attempt exists.
    taken: list[tuple[Delivery, Webhook]] = []
    expired: list[Delivery] = []
    for delivery, webhook in rows:
        if len(taken) >= limit:
            break
        if default_allowance is not None:
            left = remaining.get(webhook.id, default_allowance)
            if left <= 0:
                continue  # this receiver has enough in flight; others go first
            remaining[webhook.id] = left - 1
        if delivery.attempts_made >= delivery.max_attempts or _past_deadline(delivery, now):
            expired.append(delivery)
        else:
            taken.append((delivery, webhook))
    lost = [d.id for d in (*expired, *(d for d, _ in taken)) if d.lease_expires_at is not None]
    if lost:
        await _close_lost_attempts(session, lost, now)
    for delivery in expired:
        delivery.status, delivery.lease_expires_at, delivery.updated_at = "dead", None, now
        # Ends the lost claim's lease as a take-over would: its late outcome is fenced off.
        delivery.lease_token += 1
    # A webhook's secrets are decrypted once per claim, not once per delivery (a Fernet
    # decryption each).
    secrets_of: dict[str, tuple[str, ...]] = {}
    claims: list[Claim] = []
    for delivery, webhook in taken:
        terms = delivery.take_lease(now, lease_seconds(runtime))
        delivery.first_attempt_at = delivery.first_attempt_at or now
        delivery.updated_at = now
        # The id is made here rather than by the INSERT, so nothing needs flushing per row: the one
        # flush below sends all the UPDATEs as one executemany and all the INSERTs together.
        attempt = DeliveryAttempt(
            id=new_id("att"), delivery_id=delivery.id, number=delivery.attempts_made, started_at=now
        )
        session.add(attempt)
        if webhook.id not in secrets_of:
            secrets_of[webhook.id] = signing_secrets(webhook, runtime.secret_box, now)
        claims.append(
            Claim(
                **terms,
                delivery_id=delivery.id,
                attempt_id=attempt.id,
                webhook_id=webhook.id,
                url=webhook.url,
                secrets=secrets_of[webhook.id],
                event_id=delivery.event.payload_id,
                first_attempt_at=delivery.first_attempt_at,
                retry_policy=dict(webhook.retry_policy),
                body=payload_body(
                    delivery.event,
                    webhook_id=webhook.id,
                    delivery_id=delivery.id,
                    attempt=delivery.attempts_made,
                ),
            )
        )
    await session.flush()
    return claims


def _past_deadline(delivery: Delivery, now: datetime) -> bool:
    return delivery.first_attempt_at is not None and now > delivery.first_attempt_at + DELIVERY_DEADLINE


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


# Core statements for `record_batch`, run with a list of parameter sets (executemany). The
# delivery's UPDATE is fenced: it matches only while the claim's lease token is still the row's,
# so an outcome from a claim whose lease was taken over changes nothing. One statement per kind of
# outcome, because each kind sets different columns.
_attempts = cast(Table, DeliveryAttempt.__table__)
_deliveries = cast(Table, Delivery.__table__)
_FINISH_ATTEMPT = (
    update(_attempts)
    .where(_attempts.c.id == bindparam("b_id"))
    .values(
        finished_at=bindparam("b_now"),
        duration_ms=bindparam("b_duration_ms"),
        status_code=bindparam("b_status_code"),
        success=bindparam("b_success"),
        error=bindparam("b_error"),
        response_body=bindparam("b_response_body"),
    )
)
_FENCED = update(_deliveries).where(Delivery.held_by(bindparam("b_id"), bindparam("b_token")))
_COMMON: dict[str, Any] = {
    "lease_expires_at": None,
    "last_status_code": bindparam("b_status_code"),
    "last_error": bindparam("b_error"),
    "updated_at": bindparam("b_now"),
}
_SUCCEEDED = _FENCED.values(**_COMMON, status="succeeded", succeeded_at=bindparam("b_now"))
_RETRYING = _FENCED.values(**_COMMON, status="retrying", next_attempt_at=bindparam("b_next_at"))
_DEAD = _FENCED.values(**_COMMON, status="dead")


async def record_batch(runtime: Runtime, outcomes: list[tuple[Claim, Outcome]]) -> None:
    """Write the outcomes of several attempts in one transaction: each attempt row by its id, then
    each delivery's next state, fenced by its claim's lease token (a claim that lost its lease
    changes nothing of its delivery). Either all are recorded or none is."""
    if not outcomes:
        return
    now = utcnow()
    attempts: list[dict[str, Any]] = []
    by_kind: dict[str, list[dict[str, Any]]] = {"succeeded": [], "retrying": [], "dead": []}
    # Each statement takes its rows in delivery-id order, so two batches that share rows (only a
    # stale claim and its take-over can) rarely deadlock; the worker retries a failed batch one
    # outcome at a time.
    for claim, outcome in sorted(outcomes, key=lambda item: item[0].delivery_id):
        common = {"b_id": claim.attempt_id, "b_now": now, "b_status_code": outcome.status_code}
        attempts.append(
            {
                **common,
                "b_duration_ms": outcome.duration_ms,
                "b_success": outcome.success,
                "b_error": outcome.error,
                "b_response_body": outcome.response_body,
            }
        )
        fenced = {**common, "b_id": claim.delivery_id, "b_token": claim.lease_token, "b_error": outcome.error}
        if outcome.success:
            by_kind["succeeded"].append(fenced)
            continue
        next_at = now + timedelta(seconds=retry_delay(claim.retry_policy, claim.attempt))
        if claim.attempt >= claim.max_attempts or next_at > claim.first_attempt_at + DELIVERY_DEADLINE:
            by_kind["dead"].append(fenced)
        else:
            by_kind["retrying"].append({**fenced, "b_next_at": next_at})
    statements = {"succeeded": _SUCCEEDED, "retrying": _RETRYING, "dead": _DEAD}
    async with runtime.db.transaction(write=True) as session:
        # Deliveries first, then attempts: a concurrent claim locks a delivery and then updates its
        # lost attempt, so taking the locks in the same order means the two never deadlock.
        for kind, params in by_kind.items():
            if params:
                await session.execute(statements[kind], params)
        await session.execute(_FINISH_ATTEMPT, attempts)


async def record(runtime: Runtime, claim: Claim, outcome: Outcome) -> None:
    """Write one attempt's outcome (see `record_batch`)."""
    await record_batch(runtime, [(claim, outcome)])
