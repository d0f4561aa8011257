"""Matter templates (docs/api-conventions.md#matter-templates): versioned data, like the deadline
rule sets. A change is a new version; a case copies what its version said when it was opened, so
no later version changes it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from casefile.clock import utcnow
from casefile.db import Base, UTCDateTime


class MatterTemplate(Base):
    __tablename__ = "matter_templates"

    # The firm's own id for the template (a slug), and its version from 1.
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    version: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    definition: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_by: Mapped[str | None] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
