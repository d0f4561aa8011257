"""Delivering one event to one webhook (the lease: `casefile.worker.lease`):

- `claims.claim_due` (one short transaction) picks due deliveries (`FOR UPDATE SKIP LOCKED` on
  PostgreSQL; SQLite's write transactions are exclusive), and for each bumps the fencing token,
  takes a lease longer than one attempt can last, reserves the next attempt number and records the
  attempt as started. A lease that ran out (its worker died) is taken over, and its attempt marked
  lost.
- `attempt` (here) sends the signed body with no transaction open, under one hard time-out for the
  whole request, reading at most a few KiB of the answer.
- `recording.record_batch` (one short transaction for any number of outcomes) writes each
  attempt's outcome, and updates each delivery only if the lease is still that claim's (fencing):
  success, a retry time, or the dead-letter status.

This module holds what they share: a `Claim`, an `Outcome`, the retry policy, the payload and its
signing secrets.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import httpx

from casefile import __version__
from casefile.clock import format_timestamp, utcnow
from casefile.models import Event
from casefile.runtime import Runtime
from casefile.secretbox import SecretBox
from casefile.webhooks.signing import signature_headers
from casefile.webhooks.ssrf import ForbiddenAddress, GuardedTransport
from casefile.worker.lease import LeaseClaim, backoff_seconds

MAX_DELAY_SECONDS = 3600
DELIVERY_DEADLINE = timedelta(hours=24)
RESPONSE_READ_LIMIT = 4096  # bytes of a receiver's answer we read at most
RESPONSE_KEEP = 1024  # of which we keep this much


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
    # Seconds the receiver asked us to wait (429 or 503 with `Retry-After`): a delay, not a failed try.
    retry_after: float | None = None

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
    retry_after: float | None = None
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
                    if status_code in (429, 503):
                        retry_after = parse_retry_after(response.headers.get("retry-after"))
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
        retry_after=retry_after,
    )


def parse_retry_after(value: str | None) -> float | None:
    """`Retry-After` as seconds from now (delay-seconds or an HTTP date, RFC 9110 §10.2.3), at
    most the delivery deadline; None if absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        seconds = float(value)
    else:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            return None
        seconds = (when - utcnow()).total_seconds()
    return min(max(seconds, 0.0), DELIVERY_DEADLINE.total_seconds())
