"""`emit`: the one way to record an event. The event row and one delivery row per active webhook
subscribed to it (the transactional outbox) are written in the caller's transaction, just before
it commits, so they commit together with the change that caused them, or not at all. After the
commit, the delivery worker is woken. Every event is also the audit trail's record of the change
(`audit.service.record_event`), in the same transaction.

The rows are written at the end (`db.before_commit`) rather than at each `emit`: a transaction that
emits several events (a new case and its client party) reads the webhooks once and writes all its
events in one INSERT and all their deliveries in another, instead of an INSERT, a SELECT and an
INSERT per event. They are written ahead of the transaction's audit entries (`first`), which
take no lock either."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from sqlalchemy import Table, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.audit.service import record_event
from casefile.clock import new_id, utcnow
from casefile.db import after_commit, pending_rows, take_pending_rows, transaction_state
from casefile.events.catalogue import EVENT_NAMES, subscribes
from casefile.models import Case, Delivery, Event, Webhook
from casefile.worker.wakeup import Wakeup, notify_in_transaction

# Built once (building a statement costs more than running it), run with the rows as parameters.
_ACTIVE_WEBHOOKS = select(
    Webhook.id, Webhook.events, Webhook.retry_policy, Webhook.case_ids, Webhook.case_types
).where(Webhook.active.is_(True))
_INSERT_EVENTS = insert(cast(Table, Event.__table__))
_INSERT_DELIVERIES = insert(cast(Table, Delivery.__table__))


async def emit(session: AsyncSession, name: str, payload: Mapping[str, Any], *, audited: bool = True) -> str:
    """Record event `name` with payload `data` (and its audit entry, unless `audited` is False:
    only for a database whose schema predates the audit trail, see `backup.create`); its id."""
    if name not in EVENT_NAMES:
        raise ValueError(f"unknown event {name!r}")  # a programming error, never user input
    event_id = new_id("evt")
    data = dict(payload)  # a builder's TypedDict (events.schemas), or a plain dict
    event: dict[str, Any] = {
        "id": event_id,
        "name": name,
        "data": data,
        "occurred_at": utcnow(),
        "is_test": False,
    }
    pending_rows(session, write_outbox, first=True).append(event)
    if audited:
        record_event(session, name, data, event_id)
    return event_id


async def write_outbox(session: AsyncSession) -> None:
    """Write the events emitted so far in the session's transaction, with their deliveries (the
    before-commit action of `emit`; a test that reads them inside its transaction calls it)."""
    events = take_pending_rows(session, write_outbox)
    if not events:
        return
    webhooks = (await session.execute(_ACTIVE_WEBHOOKS)).all()
    await session.execute(_INSERT_EVENTS, events)
    case_types = await _case_types(session, events) if any(w.case_types for w in webhooks) else {}
    deliveries = [
        {
            "id": new_id("delivery"),
            "webhook_id": webhook.id,
            "event_id": event["id"],
            "status": "pending",
            "max_attempts": webhook.retry_policy["max_attempts"],
            "next_attempt_at": event["occurred_at"],
        }
        for event in events
        for webhook in webhooks
        if subscribes(webhook.events, event["name"]) and _receives(webhook, event, case_types)
    ]
    if deliveries:
        await session.execute(_INSERT_DELIVERIES, deliveries)
        await announce_deliveries(session)


async def announce_deliveries(session: AsyncSession) -> None:
    """Wake the workers once the transaction that created deliveries has committed."""
    await notify_in_transaction(session)
    wakeup: Wakeup | None = session.info.get("wakeup")
    state = transaction_state(session)
    if wakeup is not None and not state.get("wakeup_registered"):
        state["wakeup_registered"] = True
        after_commit(session, wakeup.announce)


def _receives(webhook: Any, event: dict[str, Any], case_types: dict[str, str | None]) -> bool:
    """Beyond its subscription: a webhook is never sent the events about itself (its circuit's
    `webhook.failing`), and one filtered by `case_ids` or `case_types` only those of such matters."""
    data = event["data"]
    if event["name"].startswith("webhook.") and data.get("webhook_id") == webhook.id:
        return False
    if not webhook.case_ids and not webhook.case_types:
        return True
    case_id = data.get("case_id")
    if case_id is None:
        return False
    if webhook.case_ids and case_id not in webhook.case_ids:
        return False
    if not webhook.case_types:
        return True
    return (case_types.get(case_id) or "").lower() in {t.lower() for t in webhook.case_types}


async def _case_types(session: AsyncSession, events: list[dict[str, Any]]) -> dict[str, str | None]:
    """The type of each matter the events are about (from the event when it says, as a purged
    matter's row is gone)."""
    types: dict[str, str | None] = {}
    for event in events:
        case_id = event["data"].get("case_id")
        if isinstance(case_id, str):
            types.setdefault(case_id, event["data"].get("case_type"))
    missing = [case_id for case_id, case_type in types.items() if case_type is None]
    if missing:
        rows = await session.execute(select(Case.id, Case.case_type).where(Case.id.in_(missing)))
        types.update({case_id: case_type for case_id, case_type in rows.all()})
    return types
