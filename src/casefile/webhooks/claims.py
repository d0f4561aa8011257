"""Claiming due deliveries: `claim_due`, in one short transaction and a fixed number of statements
whatever the batch's size (measured in bench/README.md, `webhook_workers.py`): the locking SELECT
reads columns, not ORM objects; one UPDATE closes the attempts of workers that died (interrupted:
not one of the delivery's tries, so its budget grows by one), one marks the deliveries out of
attempts or time as dead, one leases every taken row, one INSERT starts their attempts.

A row whose claim cannot be built (its webhook's secret cannot be decrypted, its retry policy or
event is broken) fails alone: its attempt is recorded as failed with the reason, logged and
counted (`casefile_webhook_broken_deliveries`), and the rest of the batch goes on."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import Row, Select, Table, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.clock import new_id, utcnow
from casefile.models import Delivery, DeliveryAttempt, Event, Webhook
from casefile.runtime import Runtime
from casefile.webhooks import circuit
from casefile.webhooks.delivery import (
    DELIVERY_DEADLINE,
    Claim,
    lease_seconds,
    payload_body,
    retry_delay,
    signing_secrets,
)
from casefile.webhooks.recording import start_attempts
from casefile.worker.lease import leased_terms

LOST_ATTEMPT = "The worker stopped during this attempt (its lease ran out)"
UNREADABLE_SECRET = "The webhook's signing secret cannot be decrypted (was CASEFILE_SECRET_KEY changed?)"  # noqa: S105
BROKEN_ROW = "This delivery's stored data cannot be used"
BROKEN_RETRY_SECONDS = 300.0  # when the row's own retry policy is what is broken
log = logging.getLogger(__name__)
_deliveries = cast(Table, Delivery.__table__)
_webhooks = cast(Table, Webhook.__table__)
_events = cast(Table, Event.__table__)
DueRow = Row[*tuple[Any, ...]]  # a row of `_due_rows`'s SELECT


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
    per webhook; or exactly `delivery_id` (the test endpoint: its webhook may be inactive)."""
    now = utcnow()
    rows = (await session.execute(_due_rows(now, limit, default_allowance, delivery_id))).all()
    # First decide, in memory, which rows this claim takes and which have run out of attempts or
    # time, so that the attempts left open by dead workers are closed with one statement, before
    # any new attempt exists.
    chosen = _choose(rows, now, limit, allowance, default_allowance)
    lost = [row.id for row in (*chosen.expired, *chosen.taken) if _lost(row)]
    if lost:
        await _close_lost_attempts(session, lost, now)
    if chosen.expired:
        await _mark_dead(session, [row.id for row in chosen.expired], now)
    if not chosen.taken:
        return []
    claims, broken = _claims(chosen.taken, runtime, now)
    if broken:
        await _fail_broken(session, runtime, broken, now)
    if not claims:
        return []
    d = _deliveries.c
    await session.execute(
        Delivery.take_leases([c.delivery_id for c in claims], now, lease_seconds(runtime)).values(
            first_attempt_at=func.coalesce(d.first_attempt_at, now), updated_at=now
        )
    )
    await start_attempts(session, [(c.attempt_id, c.delivery_id, c.attempt, now) for c in claims])
    return claims


def _lost(row: DueRow) -> bool:
    """A due row still leased: its worker died (or stalled) during an attempt."""
    return row.lease_expires_at is not None


def _budget(row: DueRow) -> int:
    """The row's attempts, counting back the one its lost worker left unfinished (interrupted)."""
    return int(row.max_attempts) + (1 if _lost(row) else 0)


def _due_rows(
    now: datetime, limit: int, default_allowance: int | None, delivery_id: str | None
) -> Select[Any]:
    """The due deliveries with their webhook and event, locked (skipping rows other workers hold).
    With per-webhook allowances, more rows than `limit` are read, since some will be skipped."""
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
        return statement.where(d.id == delivery_id)
    return statement.where(w.active.is_(True))


@dataclass(frozen=True)
class _Chosen:
    taken: list[DueRow]
    expired: list[DueRow]  # out of attempts or past the delivery deadline: to the dead letters


def _choose(
    rows: list[DueRow],
    now: datetime,
    limit: int,
    allowance: Mapping[str, int] | None,
    default_allowance: int | None,
) -> _Chosen:
    """Which rows this claim takes (up to `limit`; a receiver with enough in flight is skipped so
    that others go first), and which have run out of attempts or time."""
    remaining = dict(allowance or {})
    taken: list[DueRow] = []
    expired: list[DueRow] = []
    for row in rows:
        if len(taken) >= limit:
            break
        if default_allowance is not None:
            left = remaining.get(row.webhook_id, default_allowance)
            if left <= 0:
                continue
            remaining[row.webhook_id] = left - 1
        if row.attempts_made >= _budget(row) or _past_deadline(row.first_attempt_at, now):
            expired.append(row)
        else:
            taken.append(row)
    return _Chosen(taken, expired)


def _claims(taken: list[DueRow], runtime: Runtime, now: datetime) -> tuple[list[Claim], list[_Broken]]:
    """A claim per taken row (its lease's terms, the signed body's parts, a new attempt id), and
    the rows whose claim could not be built, each with the reason."""
    # A webhook's secrets are decrypted once per claim, not once per delivery (a Fernet decryption
    # each); a webhook whose secret cannot be decrypted fails each of its rows alone.
    secrets_of: dict[str, tuple[str, ...] | None] = {}
    claims: list[Claim] = []
    broken: list[_Broken] = []
    for row in taken:
        if row.webhook_id not in secrets_of:
            try:
                secrets_of[row.webhook_id] = signing_secrets(
                    row.secret_sealed, row.previous_secrets, runtime.secret_box, now
                )
            except Exception:
                log.exception("webhook %s: its signing secret cannot be decrypted", row.webhook_id)
                secrets_of[row.webhook_id] = None
        secrets = secrets_of[row.webhook_id]
        if secrets is None:
            broken.append(_Broken(row, "secret", UNREADABLE_SECRET))
            continue
        try:
            claims.append(_claim(row, secrets, now))
        except Exception as exc:
            log.exception("delivery %s cannot be attempted: its stored data is broken", row.id)
            broken.append(_Broken(row, "row", f"{BROKEN_ROW} ({type(exc).__name__})"))
    return claims, broken


def _claim(row: DueRow, secrets: tuple[str, ...], now: datetime) -> Claim:
    terms = leased_terms(
        attempts_made=row.attempts_made, lease_token=row.lease_token, max_attempts=_budget(row)
    )
    # Read now, so that a policy that cannot be used fails this row, not the recording of a batch.
    retry_delay(row.retry_policy, terms["attempt"])
    event = Event(
        id=row.event_id,
        name=row.event_name,
        data=row.data,
        occurred_at=row.occurred_at,
        is_test=row.is_test,
    )
    return Claim(
        **terms,
        delivery_id=row.id,
        attempt_id=new_id("att"),
        webhook_id=row.webhook_id,
        url=row.url,
        secrets=secrets,
        event_id=event.payload_id,
        first_attempt_at=row.first_attempt_at or now,
        retry_policy=row.retry_policy,
        body=payload_body(event, webhook_id=row.webhook_id, delivery_id=row.id, attempt=terms["attempt"]),
    )


@dataclass(frozen=True)
class _Broken:
    row: DueRow
    reason: str  # the metric's label: `secret` or `row`
    error: str


async def _fail_broken(session: AsyncSession, runtime: Runtime, broken: list[_Broken], now: datetime) -> None:
    """Record each broken row's attempt as failed, and retry it later like any failed attempt (an
    operator may fix the key or the row meanwhile), or declare it dead when none is left."""
    d = _deliveries.c
    for item in broken:
        row = item.row
        runtime.metrics.broken_deliveries.labels(item.reason).inc()
        attempt = row.attempts_made + 1
        try:
            delay = retry_delay(row.retry_policy, attempt)
        except Exception:
            delay = BROKEN_RETRY_SECONDS
        next_at = now + timedelta(seconds=delay)
        dead = attempt >= _budget(row) or next_at > (row.first_attempt_at or now) + DELIVERY_DEADLINE
        await session.execute(
            update(_deliveries)
            .where(d.id == row.id)
            .values(
                status="dead" if dead else "retrying",
                attempts_made=attempt,
                max_attempts=_budget(row),
                lease_token=d.lease_token + 1,
                lease_expires_at=None,
                next_attempt_at=now if dead else next_at,
                first_attempt_at=func.coalesce(d.first_attempt_at, now),
                last_status_code=None,
                last_error=item.error,
                updated_at=now,
            )
        )
        session.add(
            DeliveryAttempt(
                delivery_id=row.id,
                number=attempt,
                started_at=now,
                finished_at=now,
                duration_ms=0,
                success=False,
                error=item.error,
            )
        )
    await session.flush()
    # A webhook whose secret cannot be read is failing like one whose receiver is down.
    results = [circuit.Result(b.row.webhook_id, now, "failure", None, b.error) for b in broken]
    await circuit.note(session, runtime.settings, results, now)


def _past_deadline(first_attempt_at: datetime | None, now: datetime) -> bool:
    return first_attempt_at is not None and now > first_attempt_at + DELIVERY_DEADLINE


async def _mark_dead(session: AsyncSession, delivery_ids: list[str], now: datetime) -> None:
    d = _deliveries.c
    await session.execute(
        update(_deliveries)
        .where(d.id.in_(delivery_ids))
        # The token is bumped as a take-over would: a lost claim's late outcome is fenced off.
        .values(status="dead", lease_expires_at=None, updated_at=now, lease_token=d.lease_token + 1)
    )


async def _close_lost_attempts(session: AsyncSession, delivery_ids: list[str], now: datetime) -> None:
    """The attempts that workers whose lease ran out left unfinished: interrupted, and given back
    to their deliveries' budgets (a crash-looping worker must not use up healthy deliveries)."""
    d = _deliveries.c
    await session.execute(
        update(_deliveries).where(d.id.in_(delivery_ids)).values(max_attempts=d.max_attempts + 1)
    )
    await session.execute(
        update(DeliveryAttempt)
        .where(DeliveryAttempt.delivery_id.in_(delivery_ids), DeliveryAttempt.finished_at.is_(None))
        .values(finished_at=now, success=False, error=LOST_ATTEMPT, interrupted=True)
        .execution_options(synchronize_session=False)
    )
