from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, Index, String, func
from sqlalchemy.orm import Mapped, mapped_column

from casefile.clock import new_id, utcnow
from casefile.db import Base, UTCDateTime

ROLES = ("admin", "attorney", "paralegal", "viewer")


class User(Base):
    __tablename__ = "users"

    id: Mapped[str] = mapped_column(String(40), primary_key=True, default=lambda: new_id("user"))
    email: Mapped[str] = mapped_column(String(320))
    name: Mapped[str] = mapped_column(String(200))
    role: Mapped[str] = mapped_column(String(20))
    password_hash: Mapped[str | None] = mapped_column(String(200))
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_login_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # The web app's time zone for this account (an IANA name); None: the browser's own.
    time_zone: Mapped[str | None] = mapped_column(String(64))

    # Emails are unique regardless of case: the database enforces it on lower(email).
    __table_args__ = (Index("uq_users_email_lower", func.lower(email), unique=True),)
