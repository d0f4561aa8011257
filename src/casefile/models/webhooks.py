from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from casefile.clock import new_id, utcnow
from casefile.db import Base, UTCDateTime
from casefile.models.events import Event
from casefile.worker.lease import Leased, due_index


class Webhook(Base):
    __tablename__ = "webhooks"

    id: Mapped[str] = mapped_column(String(40), primary_key=True, default=lambda: new_id("wh"))
    name: Mapped[str] = mapped_column(String(200))
    url: Mapped[str] = mapped_column(String(2048))
    events: Mapped[list[str]] = mapped_column(JSON)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    retry_policy: Mapped[dict[str, Any]] = mapped_column(JSON)
    # Encrypted (casefile.secretbox); never returned by the API.
    secret_sealed: Mapped[str] = mapped_column(Text)
    # Secrets replaced by a rotation, still signing until their `expires_at`: [{sealed, expires_at}].
    previous_secrets: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    created_by: Mapped[str | None] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # The circuit (`webhooks.circuit`): since when every attempt failed, how many in a row, how many
    # `webhook.failing` warnings went out, and why the circuit disabled it (None: it did not).
    failing_since: Mapped[datetime | None] = mapped_column(UTCDateTime)
    consecutive_failures: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    failing_warnings: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    disabled_reason: Mapped[str | None] = mapped_column(Text)
    # Only the events of these matters / of matters of these types (None: every event).
    case_ids: Mapped[list[str] | None] = mapped_column(JSON)
    case_types: Mapped[list[str] | None] = mapped_column(JSON)


DELIVERY_STATUSES = ("pending", "retrying", "succeeded", "dead")


class Delivery(Leased, Base):
    """One event to one webhook, with its retry state. Claimed by a worker with a lease
    (`lease_expires_at`) and a fencing token (`lease_token`, bumped by every claim)."""

    __tablename__ = "deliveries"
    CLAIMABLE = ("pending", "retrying")

    id: Mapped[str] = mapped_column(String(40), primary_key=True, default=lambda: new_id("delivery"))
    webhook_id: Mapped[str] = mapped_column(ForeignKey("webhooks.id", ondelete="CASCADE"))
    event_id: Mapped[str] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"), index=True)
    first_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_status_code: Mapped[int | None] = mapped_column(Integer)
    last_error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    succeeded_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    event: Mapped[Event] = relationship(lazy="joined", innerjoin=True)
    attempts: Mapped[list[DeliveryAttempt]] = relationship(
        order_by="DeliveryAttempt.number", lazy="raise", passive_deletes=True
    )

    __table_args__ = (
        due_index("ix_deliveries_due", CLAIMABLE),
        Index("ix_deliveries_webhook_status_created", "webhook_id", "status", "created_at", "id"),
        Index("ix_deliveries_status_created", "status", "created_at", "id"),
    )


class DeliveryAttempt(Base):
    __tablename__ = "delivery_attempts"

    id: Mapped[str] = mapped_column(String(40), primary_key=True, default=lambda: new_id("att"))
    delivery_id: Mapped[str] = mapped_column(ForeignKey("deliveries.id", ondelete="CASCADE"), index=True)
    number: Mapped[int] = mapped_column(Integer)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    duration_ms: Mapped[int | None] = mapped_column(Integer)
    status_code: Mapped[int | None] = mapped_column(Integer)
    success: Mapped[bool | None] = mapped_column(Boolean)
    error: Mapped[str | None] = mapped_column(Text)
    response_body: Mapped[str | None] = mapped_column(Text)
    # Cut off by the worker's crash (its lease ran out): not one of the delivery's tries.
    interrupted: Mapped[bool] = mapped_column(Boolean, default=False, server_default="false")


RECOVERY_STATUSES = ("running", "completed", "failed")


class WebhookRecovery(Base):
    """`POST /admin/webhooks/{id}/recover`: re-queue a webhook's failed and dead deliveries made in
    a window, in bounded batches, with its progress (`webhooks.recovery`)."""

    __tablename__ = "webhook_recoveries"

    id: Mapped[str] = mapped_column(String(40), primary_key=True, default=lambda: new_id("rcv"))
    webhook_id: Mapped[str] = mapped_column(ForeignKey("webhooks.id", ondelete="CASCADE"), index=True)
    since: Mapped[datetime] = mapped_column(UTCDateTime)
    until: Mapped[datetime] = mapped_column(UTCDateTime)
    status: Mapped[str] = mapped_column(String(20), default="running")
    total: Mapped[int] = mapped_column(Integer, default=0)
    requeued: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str | None] = mapped_column(Text)
    created_by: Mapped[str | None] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
