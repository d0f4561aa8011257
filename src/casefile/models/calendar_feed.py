from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from casefile.clock import utcnow
from casefile.db import Base, UTCDateTime


class CalendarToken(Base):
    """A user's feed token, stored as its SHA-256 only (the token is shown once, in the URL). One
    per user: making a new one replaces the old, which stops working at once."""

    __tablename__ = "calendar_tokens"

    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
