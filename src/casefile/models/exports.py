"""Matter exports (`POST /cases/{id}/exports`): a job claimed by a worker with a lease, like a bulk
job; the worker writes the matter's zip to a temporary file and hands it to the content store, so
the finished export is served from wherever documents are (docs/decisions/0030-matter-export.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from casefile.clock import new_id, utcnow
from casefile.db import Base, UTCDateTime
from casefile.worker.lease import Leased, due_index

EXPORT_STATUSES = ("pending", "running", "succeeded", "failed")


class ExportJob(Leased, Base):
    __tablename__ = "export_jobs"
    CLAIMABLE = ("pending", "running")

    id: Mapped[str] = mapped_column(String(40), primary_key=True, default=lambda: new_id("exp"))
    # A plain id (no foreign key): an export outlives nothing, but its row is its requester's record.
    case_id: Mapped[str] = mapped_column(String(40), index=True)
    # Who asked (the principal, and the request's context for the audit entries it writes).
    acting_as: Mapped[dict[str, Any]] = mapped_column(JSON)
    requested_by: Mapped[str | None] = mapped_column(String(40), index=True)
    # Progress: files written of the files planned, and bytes of content written so far.
    total_files: Mapped[int] = mapped_column(Integer, default=0)
    files_done: Mapped[int] = mapped_column(Integer, default=0)
    bytes_done: Mapped[int] = mapped_column(BigInteger, default=0)
    # The finished zip: its content-store key (SHA-256), size and the manifest's summary.
    sha256: Mapped[str | None] = mapped_column(String(64))
    size: Mapped[int | None] = mapped_column(BigInteger)
    summary: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    error: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    max_attempts: Mapped[int] = mapped_column(Integer, default=5)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    __table_args__ = (due_index("ix_export_jobs_due", CLAIMABLE),)
