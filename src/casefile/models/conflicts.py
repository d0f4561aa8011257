from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from casefile.clock import new_id, utcnow
from casefile.db import Base, UTCDateTime


class ConflictCheck(Base):
    """One conflict check as it was run: who, when, the names, and every hit unredacted. Each
    reader sees the hits redacted for them (conflicts.service.redact), so the record stays whole
    whoever reads it later."""

    __tablename__ = "conflict_checks"

    id: Mapped[str] = mapped_column(String(40), primary_key=True, default=lambda: new_id("cc"))
    # The case the check was run for (a new matter, an adverse party added), if any. A plain id:
    # the record of a check outlives the case.
    case_id: Mapped[str | None] = mapped_column(String(40))
    names: Mapped[list[str]] = mapped_column(JSON)
    hits: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    created_by: Mapped[str | None] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    __table_args__ = (
        Index("ix_conflict_checks_created_at_id", "created_at", "id"),
        Index("ix_conflict_checks_case_id_created_at", "case_id", "created_at", "id"),
    )
