from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Integer, LargeBinary, String, Text
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
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    __table_args__ = (due_index("ix_ai_jobs_due", CLAIMABLE),)


class DocumentChunk(Base):
    """A passage of a processed document with its embedding. The integer id is the full-text
    index's rowid (stable, unlike SQLite's implicit rowid) and lets the in-process vector index
    catch up by reading only ids above the highest it holds."""

    __tablename__ = "document_chunks"
    # Ids are never reused (SQLite would otherwise hand out a deleted top id again): the vector
    # index catches up by reading ids above the highest it holds.
    __table_args__ = {"sqlite_autoincrement": True}

    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    )
    document_id: Mapped[str] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"), index=True)
    case_id: Mapped[str] = mapped_column(String(40), index=True)
    chunk_index: Mapped[int] = mapped_column(Integer)
    page: Mapped[int] = mapped_column(Integer)
    start: Mapped[int] = mapped_column(Integer)
    end: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    embedding: Mapped[bytes] = mapped_column(LargeBinary)  # EMBEDDING_DIM float32 values, L2-normalised
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
