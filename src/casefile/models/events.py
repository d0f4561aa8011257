from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, String
from sqlalchemy.orm import Mapped, mapped_column

from casefile.clock import new_id, utcnow
from casefile.db import Base, UTCDateTime


class Event(Base):
    """The transactional outbox: one row per event, written in the transaction of its change."""

    __tablename__ = "events"

    id: Mapped[str] = mapped_column(String(40), primary_key=True, default=lambda: new_id("evt"))
    name: Mapped[str] = mapped_column(String(64), index=True)
    data: Mapped[dict[str, Any]] = mapped_column(JSON)
    occurred_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, index=True)
    # Sent by POST /admin/webhooks/{id}/test: delivered to that webhook only.
    is_test: Mapped[bool] = mapped_column(Boolean, default=False)

    @property
    def payload_id(self) -> str:
        """The `id` receivers see (`webhook_…`): one per event occurrence, for deduplication."""
        return "webhook_" + self.id.removeprefix("evt_")
