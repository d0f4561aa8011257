from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from casefile.clock import new_id, utcnow
from casefile.db import Base, UTCDateTime
from casefile.worker.lease import Leased, due_index

JOB_KINDS = ("document", "case")
JOB_STATUSES = ("pending", "running", "succeeded", "failed")


class AiJob(Leased, Base):
    """One run of the pipeline, claimed by a worker like a delivery: a lease with a fencing token,
    so a crashed worker's job is taken over when the lease runs out, and a late finisher whose
    lease was taken over records nothing."""

    __tablename__ = "ai_jobs"
    # A running job is claimable again once its lease has run out (its worker died).
    CLAIMABLE = ("pending", "running")

    id: Mapped[str] = mapped_column(String(40), primary_key=True, default=lambda: new_id("job"))
    kind: Mapped[str] = mapped_column(String(20))
    document_id: Mapped[str | None] = mapped_column(
        ForeignKey("documents.id", ondelete="CASCADE"), index=True
    )
    case_id: Mapped[str] = mapped_column(ForeignKey("cases.id", ondelete="CASCADE"), index=True)
    # The lease column of `Leased`, with the default jobs have always had (a delivery's comes from
    # its webhook's retry policy).
    max_attempts: Mapped[int] = mapped_column(Integer, default=3)
    last_error: Mapped[str | None] = mapped_column(Text)
    requested_by: Mapped[str | None] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime)  # its first attempt's start
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    __table_args__ = (due_index("ix_ai_jobs_due", CLAIMABLE),)
