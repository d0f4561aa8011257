"""Bulk actions on cases (`POST /cases/bulk`): a job claimed by a worker with a lease, like an AI
job; each matter is changed in a transaction of its own, together with the job's progress, so a
worker that dies loses nothing and repeats nothing (the next claim goes on from `processed`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from casefile.clock import new_id, utcnow
from casefile.db import Base, UTCDateTime
from casefile.worker.lease import Leased, due_index

BULK_STATUSES = ("pending", "running", "succeeded", "failed")


class BulkJob(Leased, Base):
    __tablename__ = "bulk_jobs"
    CLAIMABLE = ("pending", "running")

    id: Mapped[str] = mapped_column(String(40), primary_key=True, default=lambda: new_id("bulk"))
    action: Mapped[dict[str, Any]] = mapped_column(JSON)
    case_ids: Mapped[list[str]] = mapped_column(JSON)
    # One {case_id, outcome, error} per matter done, in the order asked.
    results: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    processed: Mapped[int] = mapped_column(Integer, default=0)
    succeeded: Mapped[int] = mapped_column(Integer, default=0)
    failed: Mapped[int] = mapped_column(Integer, default=0)
    # Who asked (the principal, and the request's context for the audit entries of each change).
    acting_as: Mapped[dict[str, Any]] = mapped_column(JSON)
    requested_by: Mapped[str | None] = mapped_column(String(40), index=True)
    max_attempts: Mapped[int] = mapped_column(Integer, default=20)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    __table_args__ = (due_index("ix_bulk_jobs_due", CLAIMABLE),)
