"""Recovery after an outage: `POST /admin/webhooks/{id}/recover {since, until}` re-queues every
failed (`retrying`) or `dead` delivery of the webhook made in the window, as a job: the answer is
202 with the job, whose progress (`total`, `requeued`, `status`) `GET
/admin/webhook-recoveries/{id}` shows. The work is done in batches of `BATCH` deliveries, each its
own short transaction, at most `MAX_DELIVERIES` per job (a wider window is refused: split it).

Each re-queued delivery goes again with a fresh attempt budget and deadline, as
`POST /deliveries/{id}/retry` does; one being attempted right now (leased) is left to its worker.
Re-queuing is idempotent, so a job cut short by a restart is finished by posting it again."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, and_, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.audit import service as audit
from casefile.auth.permissions import Principal
from casefile.clock import utcnow
from casefile.db import after_commit, get_or_404
from casefile.errors import ErrorDetail, ValidationFailed
from casefile.events.outbox import announce_deliveries
from casefile.models import Delivery, Webhook, WebhookRecovery
from casefile.runtime import Runtime
from casefile.webhooks.schemas import RecoverDeliveries, RecoveryOut

BATCH = 500
MAX_DELIVERIES = 100_000
RECOVERABLE = ("retrying", "dead")
log = logging.getLogger(__name__)
_deliveries = cast(Table, Delivery.__table__)
_running: set[asyncio.Task[None]] = set()  # strong references: the loop keeps only weak ones


def _window(webhook_id: str, since: datetime, until: datetime, now: datetime) -> Any:
    d = _deliveries.c
    return and_(
        d.webhook_id == webhook_id,
        d.status.in_(RECOVERABLE),
        d.created_at >= since,
        d.created_at < until,
        or_(d.lease_expires_at.is_(None), d.lease_expires_at < now),
    )


async def start_recovery(
    session: AsyncSession, runtime: Runtime, actor: Principal, webhook: Webhook, body: RecoverDeliveries
) -> WebhookRecovery:
    if body.until <= body.since:
        raise ValidationFailed(details=[ErrorDetail("until", "must be later than since")])
    now = utcnow()
    total = await session.scalar(
        select(func.count()).select_from(_deliveries).where(_window(webhook.id, body.since, body.until, now))
    )
    if (total or 0) > MAX_DELIVERIES:
        raise ValidationFailed(
            details=[
                ErrorDetail("since", f"{total} deliveries in this window; at most {MAX_DELIVERIES}: split it")
            ]
        )
    recovery = WebhookRecovery(
        webhook_id=webhook.id,
        since=body.since,
        until=body.until,
        status="running",
        total=total or 0,
        requeued=0,
        created_by=actor.actor_id,
        created_at=now,
    )
    session.add(recovery)
    await session.flush()
    audit.record(
        session,
        "webhook.recovery_started",
        resource_type="webhook",
        resource_id=webhook.id,
        details={
            "recovery_id": recovery.id,
            "since": body.since.isoformat(),
            "until": body.until.isoformat(),
        },
    )
    recovery_id = recovery.id

    async def launch() -> None:
        task = asyncio.create_task(run_recovery(runtime, recovery_id))
        _running.add(task)
        task.add_done_callback(_running.discard)

    after_commit(session, launch)  # the job row must exist for the task to read it
    return recovery


async def run_recovery(runtime: Runtime, recovery_id: str) -> None:
    try:
        await _requeue_all(runtime, recovery_id)
    except Exception:
        log.exception("webhook recovery %s failed", recovery_id)
        async with runtime.db.transaction(write=True) as session:
            recovery = await session.get(WebhookRecovery, recovery_id)
            if recovery is not None:
                recovery.status, recovery.finished_at = "failed", utcnow()
                recovery.error = "The recovery stopped on an error: post it again to finish it"


async def _requeue_all(runtime: Runtime, recovery_id: str) -> None:
    d = _deliveries.c
    after = ""
    while True:
        async with runtime.db.transaction(write=True) as session:
            recovery = await session.get(WebhookRecovery, recovery_id)
            if recovery is None:  # its webhook was deleted
                return
            webhook = await session.get(Webhook, recovery.webhook_id)
            if webhook is None:
                return
            now = utcnow()
            window = _window(recovery.webhook_id, recovery.since, recovery.until, now)
            ids = list(
                (
                    await session.execute(
                        select(d.id)
                        .where(window, d.id > after)
                        .order_by(d.id)
                        .limit(BATCH)
                        .with_for_update(skip_locked=True)
                    )
                ).scalars()
            )
            if ids:
                await session.execute(
                    update(_deliveries)
                    .where(d.id.in_(ids))
                    .values(
                        status="pending",
                        max_attempts=d.attempts_made + webhook.retry_policy["max_attempts"],
                        first_attempt_at=None,
                        next_attempt_at=now,
                        updated_at=now,
                    )
                )
                recovery.requeued += len(ids)
                await announce_deliveries(session)
                after = ids[-1]
            if len(ids) < BATCH:
                recovery.status, recovery.finished_at = "completed", now
                return


async def get_recovery(session: AsyncSession, recovery_id: str) -> WebhookRecovery:
    return await get_or_404(session, WebhookRecovery, recovery_id, "Recovery not found")


def recovery_out(recovery: WebhookRecovery) -> dict[str, Any]:
    return RecoveryOut.model_validate({**_columns(recovery), "job_id": recovery.id}).model_dump(mode="json")


def _columns(recovery: WebhookRecovery) -> dict[str, Any]:
    return {name: getattr(recovery, name) for name in RecoveryOut.model_fields if name != "job_id"}
