from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from casefile.db import Base, UTCDateTime

CONFIG_ROW_ID = 1


class SystemConfig(Base):
    """One row (id 1, created by the migration): only the values an administrator has set. What
    is not set falls back to the process's settings, so an unchanged field follows the environment."""

    __tablename__ = "system_config"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    overrides: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    updated_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    updated_by: Mapped[str | None] = mapped_column(String(40))
