from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from casefile.clock import new_id, utcnow
from casefile.db import Base, UTCDateTime


class LegalHold(Base):
    """A legal hold on a case: active until an administrator releases it. Released holds stay as
    the case's history (until the case itself is purged, which no active hold allows)."""

    __tablename__ = "legal_holds"

    id: Mapped[str] = mapped_column(String(40), primary_key=True, default=lambda: new_id("hold"))
    case_id: Mapped[str] = mapped_column(ForeignKey("cases.id", ondelete="CASCADE"))
    reason: Mapped[str] = mapped_column(Text)
    created_by: Mapped[str | None] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    released_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    released_by: Mapped[str | None] = mapped_column(String(40))

    __table_args__ = (Index("ix_legal_holds_case_id_created_at", "case_id", "created_at", "id"),)
