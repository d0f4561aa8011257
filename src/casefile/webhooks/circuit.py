"""Each webhook's circuit (docs/api-conventions.md#failing-endpoints): consecutive failed attempts
make it `failing` (`failing_since`), with a `webhook.failing` event at the first failure and again
after 1 h and 12 h of failure, then disable it (`active: false`, `disabled_reason`, a
`webhook.disabled` event) once it has failed for `CASEFILE_WEBHOOK_DISABLE_AFTER_SECONDS` (24 h)
or `CASEFILE_WEBHOOK_DISABLE_AFTER_FAILURES` (50) attempts in a row; `410 Gone` disables it at
once. Any success closes it again. The events go to the other webhooks subscribed to them
(`events.outbox` never sends a webhook the events about itself).

Updated in the transaction that records the attempts' outcomes, so it moves with them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import Table, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.clock import format_timestamp
from casefile.events import payloads
from casefile.events.outbox import emit
from casefile.events.schemas import WebhookState
from casefile.models import Webhook
from casefile.settings import Settings

WARNINGS_AFTER = (timedelta(0), timedelta(hours=1), timedelta(hours=12))
GONE_REASON = "The receiver answered 410 Gone"
_webhooks = cast(Table, Webhook.__table__)


@dataclass(frozen=True)
class Result:
    """What one attempt tells the circuit of its webhook."""

    webhook_id: str
    started_at: datetime
    kind: str  # `success`, `failure`, `gone` (410), or `deferred` (429/503 with Retry-After: neither)
    status_code: int | None = None
    error: str | None = None


async def note(session: AsyncSession, settings: Settings, results: Sequence[Result], now: datetime) -> None:
    by_webhook: dict[str, list[Result]] = {}
    for result in sorted(results, key=lambda r: r.started_at):
        if result.kind != "deferred":
            by_webhook.setdefault(result.webhook_id, []).append(result)
    healed = [hook for hook, rs in by_webhook.items() if rs[-1].kind == "success"]
    w = _webhooks.c
    if healed:
        # Only rows that were failing are written (the common case writes nothing).
        await session.execute(
            update(_webhooks)
            .where(w.id.in_(healed), w.failing_since.is_not(None))
            .values(failing_since=None, consecutive_failures=0, failing_warnings=0)
        )
    failing = sorted(hook for hook, rs in by_webhook.items() if rs[-1].kind != "success")
    if not failing:
        return
    rows = (
        await session.execute(select(_webhooks).where(w.id.in_(failing)).order_by(w.id).with_for_update())
    ).all()
    for row in rows:
        results_of = by_webhook[row.id]
        run = _failures_since_last_success(results_of)
        await _fail(session, settings, row, run, now)


def _failures_since_last_success(results: list[Result]) -> list[Result]:
    run: list[Result] = []
    for result in results:
        run = [] if result.kind == "success" else [*run, result]
    return run


async def _fail(
    session: AsyncSession, settings: Settings, row: Any, run: list[Result], now: datetime
) -> None:
    since = row.failing_since or run[0].started_at
    count = row.consecutive_failures + len(run)
    values: dict[str, Any] = {"failing_since": since, "consecutive_failures": count}
    last = run[-1]
    state: WebhookState = {
        "webhook_id": row.id,
        "name": row.name,
        "url": row.url,
        "failing_since": format_timestamp(since),
        "consecutive_failures": count,
        "last_status_code": last.status_code,
        "last_error": last.error,
    }
    if row.active and row.disabled_reason is None:
        due = sum(1 for after in WARNINGS_AFTER if now - since >= after)
        if due > row.failing_warnings:
            values["failing_warnings"] = due
            await emit(session, "webhook.failing", payloads.webhook_failing(state))
        reason = _disable_reason(settings, run, since, count, now)
        if reason is not None:
            values.update(active=False, disabled_reason=reason, updated_at=now)
            await emit(session, "webhook.disabled", payloads.webhook_disabled(state, reason))
    await session.execute(update(_webhooks).where(_webhooks.c.id == row.id).values(**values))


def _disable_reason(
    settings: Settings, run: list[Result], since: datetime, count: int, now: datetime
) -> str | None:
    if any(r.kind == "gone" for r in run):
        return GONE_REASON
    if count >= settings.webhook_disable_after_failures:
        return f"{count} attempts in a row failed"
    if now - since >= timedelta(seconds=settings.webhook_disable_after_seconds):
        return f"Every attempt failed since {format_timestamp(since)}"
    return None
