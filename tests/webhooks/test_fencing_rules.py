"""Leases and fencing of webhook deliveries as rules of the delivery engine, on a transaction rolled
back after each test: a live lease is not claimed again, an expired one is taken over with the next
fencing token, and an outcome recorded under a token that is no longer the delivery's changes
nothing of it. The same rule end to end: test_batching.py (a stale outcome in a batch) and
test_reliability.py (real processes killed mid-delivery)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.events.outbox import emit, write_outbox
from casefile.metrics import Metrics
from casefile.models import Delivery, DeliveryAttempt, Webhook
from casefile.secretbox import SecretBox
from casefile.settings import Settings
from casefile.webhooks.claims import LOST_ATTEMPT, UNREADABLE_SECRET, claim_due
from casefile.webhooks.delivery import Outcome
from casefile.webhooks.recording import record_batch

pytestmark = pytest.mark.anyio

SECRET = "whsec_fencing_0123456789"


@dataclass
class SavepointDatabase:
    """Stands for `runtime.db` in code that opens a transaction of its own (`record_batch`): its
    transactions are savepoints of the test's session, so they are rolled back with it."""

    session: AsyncSession

    @asynccontextmanager
    async def transaction(self, *, write: bool = True) -> AsyncIterator[AsyncSession]:
        async with self.session.begin_nested():
            yield self.session


@pytest.fixture
def runtime(db_session: AsyncSession, db_settings: Settings) -> Any:
    """What `claim_due` and `record_batch` use of a runtime: settings, secret box, database."""
    return SimpleNamespace(
        settings=db_settings,
        secret_box=SecretBox(db_settings.encryption_key),
        db=SavepointDatabase(db_session),
        metrics=Metrics(),
    )


async def due_deliveries(
    session: AsyncSession, runtime: Any, count: int, *, max_attempts: int = 5, sealed: str | None = None
) -> None:
    """One webhook subscribed to `case.created` (its secret sealed as `sealed` if given), and
    `count` such events: one delivery each."""
    session.add(
        Webhook(
            name="fencing",
            url="http://127.0.0.1:9/hook",
            events=["case.created"],
            active=True,
            retry_policy={"max_attempts": max_attempts, "initial_delay": 60, "backoff_multiplier": 1},
            secret_sealed=sealed or runtime.secret_box.seal(SECRET),
            previous_secrets=[],
        )
    )
    for number in range(count):
        await emit(session, "case.created", {"case_id": f"case_fencing_{number}"})
    await write_outbox(session)  # what the commit would write: this test's transaction never ends


def outcome(status_code: int) -> Outcome:
    error = None if 200 <= status_code < 300 else f"HTTP {status_code}"
    return Outcome(
        started_at=datetime.now(UTC), duration_ms=5, status_code=status_code, error=error, response_body="ok"
    )


async def state(session: AsyncSession, delivery_id: str) -> tuple[Any, ...]:
    """status, attempts made, fencing token, leased, last status code: read from the database,
    not from the session's objects (`record_batch` writes with Core statements)."""
    row = (
        await session.execute(
            select(
                Delivery.status,
                Delivery.attempts_made,
                Delivery.lease_token,
                Delivery.lease_expires_at.is_not(None),
                Delivery.last_status_code,
            ).where(Delivery.id == delivery_id)
        )
    ).one()
    return tuple(row)


async def attempts(session: AsyncSession, delivery_id: str) -> list[tuple[Any, ...]]:
    """number, finished, success, error of each attempt of the delivery."""
    rows = await session.execute(
        select(
            DeliveryAttempt.number,
            DeliveryAttempt.finished_at.is_not(None),
            DeliveryAttempt.success,
            DeliveryAttempt.error,
        )
        .where(DeliveryAttempt.delivery_id == delivery_id)
        .order_by(DeliveryAttempt.number)
    )
    return [tuple(r) for r in rows]


async def expire_lease(session: AsyncSession, delivery_id: str) -> None:
    """The claiming worker is presumed dead: its lease has run out."""
    await session.execute(
        update(Delivery)
        .where(Delivery.id == delivery_id)
        .values(lease_expires_at=datetime.now(UTC) - timedelta(seconds=1))
    )


async def test_a_live_lease_is_not_claimed_again(db_session: AsyncSession, runtime: Any) -> None:
    await due_deliveries(db_session, runtime, 1)
    [claim] = await claim_due(db_session, runtime, limit=5)
    assert (claim.attempt, claim.lease_token) == (1, 1)
    assert await claim_due(db_session, runtime, limit=5) == []
    assert await state(db_session, claim.delivery_id) == ("pending", 1, 1, True, None)


async def test_an_expired_lease_is_taken_over_with_the_next_token(
    db_session: AsyncSession, runtime: Any
) -> None:
    await due_deliveries(db_session, runtime, 1)
    [first] = await claim_due(db_session, runtime, limit=5)
    await expire_lease(db_session, first.delivery_id)
    [takeover] = await claim_due(db_session, runtime, limit=5)
    assert (takeover.delivery_id, takeover.attempt) == (first.delivery_id, 2)
    assert takeover.lease_token == first.lease_token + 1
    # The attempt the presumed-dead worker left open is closed as interrupted, and is not one of
    # the delivery's tries: its budget grows by one.
    assert await attempts(db_session, first.delivery_id) == [
        (1, True, False, LOST_ATTEMPT),
        (2, False, None, None),
    ]
    interrupted = await db_session.execute(
        select(DeliveryAttempt.interrupted)
        .where(DeliveryAttempt.delivery_id == first.delivery_id)
        .order_by(DeliveryAttempt.number)
    )
    assert list(interrupted.scalars()) == [True, False]
    assert (first.max_attempts, takeover.max_attempts) == (5, 6)


@pytest.mark.parametrize(
    ("status_code", "max_attempts", "recorded"),
    [
        (200, 5, ("succeeded", 1, 1, False, 200)),
        (500, 5, ("retrying", 1, 1, False, 500)),
        (500, 1, ("dead", 1, 1, False, 500)),
    ],
)
async def test_the_leaseholders_outcome_is_recorded(
    db_session: AsyncSession, runtime: Any, status_code: int, max_attempts: int, recorded: tuple[Any, ...]
) -> None:
    await due_deliveries(db_session, runtime, 1, max_attempts=max_attempts)
    [claim] = await claim_due(db_session, runtime, limit=5)
    await record_batch(runtime, [(claim, outcome(status_code))])
    assert await state(db_session, claim.delivery_id) == recorded
    assert await attempts(db_session, claim.delivery_id) == [
        (1, True, status_code == 200, None if status_code == 200 else f"HTTP {status_code}")
    ]


@pytest.mark.parametrize("late_status_code", [200, 500])
async def test_a_late_outcome_after_a_takeover_changes_nothing_of_the_delivery(
    db_session: AsyncSession, runtime: Any, late_status_code: int
) -> None:
    await due_deliveries(db_session, runtime, 2)
    first, other = await claim_due(db_session, runtime, limit=2)
    await expire_lease(db_session, first.delivery_id)
    [takeover] = await claim_due(db_session, runtime, limit=1, delivery_id=first.delivery_id)
    await record_batch(runtime, [(first, outcome(late_status_code)), (other, outcome(500))])
    # The late outcome changed nothing of its delivery: still the take-over's, nothing recorded...
    assert await state(db_session, first.delivery_id) == ("pending", 2, takeover.lease_token, True, None)
    # ...nor of the attempt record the take-over closed: it stays interrupted (a resumed worker's
    # time-out, or its success, is not that record's to write).
    assert (await attempts(db_session, first.delivery_id))[0] == (1, True, False, LOST_ATTEMPT)
    # The other outcome of the same batch, whose claim still holds its lease, is recorded.
    assert await state(db_session, other.delivery_id) == ("retrying", 1, other.lease_token, False, 500)
    # And the take-over's own outcome is recorded when it comes.
    await record_batch(runtime, [(takeover, outcome(200))])
    assert await state(db_session, first.delivery_id) == ("succeeded", 2, takeover.lease_token, False, 200)


async def test_an_interrupted_only_attempt_is_given_back_and_a_late_outcome_changes_nothing(
    db_session: AsyncSession, runtime: Any
) -> None:
    # The only attempt's worker is presumed dead once its lease runs out: the attempt was
    # interrupted, so it does not use up the delivery's one try; the take-over makes it.
    await due_deliveries(db_session, runtime, 1, max_attempts=1)
    [lost] = await claim_due(db_session, runtime, limit=5)
    await expire_lease(db_session, lost.delivery_id)
    [takeover] = await claim_due(db_session, runtime, limit=5)
    assert (takeover.attempt, takeover.max_attempts) == (2, 2)
    await record_batch(runtime, [(lost, outcome(200))])
    assert await state(db_session, lost.delivery_id) == ("pending", 2, takeover.lease_token, True, None)
    await record_batch(runtime, [(takeover, outcome(500))])
    assert (await state(db_session, lost.delivery_id))[0] == "dead"
    assert await attempts(db_session, lost.delivery_id) == [
        (1, True, False, LOST_ATTEMPT),
        (2, True, False, "HTTP 500"),
    ]


async def test_an_unreadable_secret_fails_its_deliveries_alone(
    db_session: AsyncSession, runtime: Any
) -> None:
    """One webhook's secret sealed with another key: its deliveries fail, each recorded with the
    reason and counted; the other webhook's deliveries of the same claim go out."""
    await due_deliveries(db_session, runtime, 0)  # a healthy webhook
    other_box = SecretBox("a key this installation never had")
    await due_deliveries(db_session, runtime, 2, sealed=other_box.seal(SECRET))
    claims = await claim_due(db_session, runtime, limit=10)
    healthy = {c.webhook_id for c in claims}
    assert len(claims) == 2 and len(healthy) == 1
    rows = await db_session.execute(
        select(Delivery.id, Delivery.status, Delivery.last_error).where(Delivery.webhook_id.not_in(healthy))
    )
    broken = rows.all()
    assert [(status, error) for _, status, error in broken] == [("retrying", UNREADABLE_SECRET)] * 2
    for delivery_id, _, _ in broken:
        assert await attempts(db_session, delivery_id) == [(1, True, False, UNREADABLE_SECRET)]
    assert runtime.metrics.broken_deliveries.labels("secret")._value.get() == 2
    # ...and its webhook's circuit counts them like any failure.
    failing = await db_session.execute(
        select(Webhook.consecutive_failures, Webhook.failing_since.is_not(None)).where(
            Webhook.id.not_in(healthy)
        )
    )
    assert failing.one() == (2, True)
