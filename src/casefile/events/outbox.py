"""`emit`: the one way to record an event. It adds the event row to the caller's transaction, so
the event commits together with the change that caused it, or not at all.

The webhooks issue extends this one function (delivery rows per subscribed webhook, wake-ups);
callers stay as they are.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from casefile.events.catalogue import EVENT_NAMES
from casefile.events.models import Event


async def emit(session: AsyncSession, name: str, data: dict[str, Any]) -> Event:
    if name not in EVENT_NAMES:
        raise ValueError(f"unknown event {name!r}")  # a programming error, never user input
    event = Event(name=name, data=data)
    session.add(event)
    await session.flush()
    return event
