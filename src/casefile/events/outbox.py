"""`emit`: the one way to record an event. In the caller's transaction it adds the event row and
one delivery row per active webhook subscribed to it (the transactional outbox), so the event and
its deliveries commit together with the change that caused them, or not at all. After the commit,
the delivery worker is woken. Every event is also the audit trail's record of the change
(`audit.service.record_event`), in the same transaction."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.audit.service import record_event
from casefile.clock import utcnow
from casefile.db import after_commit, transaction_state
from casefile.events.catalogue import EVENT_NAMES, subscribes
from casefile.events.models import Event
from casefile.webhooks.models import Delivery, Webhook
from casefile.worker.wakeup import Wakeup, notify_in_transaction


async def emit(session: AsyncSession, name: str, data: dict[str, Any], *, audited: bool = True) -> Event:
    """Record event `name` with payload `data` (and its audit entry, unless `audited` is False:
    only for a database whose schema predates the audit trail, see `backup.create`)."""
    if name not in EVENT_NAMES:
        raise ValueError(f"unknown event {name!r}")  # a programming error, never user input
    event = Event(name=name, data=data, occurred_at=utcnow())
    session.add(event)
    await session.flush()
    if audited:
        record_event(session, name, data, event.id)
    webhooks = await session.scalars(select(Webhook).where(Webhook.active.is_(True)))
    subscribed = [w for w in webhooks if subscribes(w.events, name)]
    for webhook in subscribed:
        session.add(
            Delivery(
                webhook_id=webhook.id,
                event_id=event.id,
                status="pending",
                max_attempts=webhook.retry_policy["max_attempts"],
                next_attempt_at=event.occurred_at,
            )
        )
    if subscribed:
        await session.flush()
        await announce_deliveries(session)
    return event


async def announce_deliveries(session: AsyncSession) -> None:
    """Wake the workers once the transaction that created deliveries has committed."""
    await notify_in_transaction(session)
    wakeup: Wakeup | None = session.info.get("wakeup")
    state = transaction_state(session)
    if wakeup is not None and not state.get("wakeup_registered"):
        state["wakeup_registered"] = True
        after_commit(session, wakeup.announce)
