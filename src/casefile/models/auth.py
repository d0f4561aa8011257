"""Login sessions, their refresh tokens, and the database deny-list of revoked sessions."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from casefile.clock import new_id, utcnow
from casefile.db import Base, UTCDateTime


class AuthSession(Base):
    """One login. Every access and refresh token carries its id; revoking it ends them all."""

    __tablename__ = "auth_sessions"

    id: Mapped[str] = mapped_column(String(40), primary_key=True, default=lambda: new_id("sess"))
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    revoked_reason: Mapped[str | None] = mapped_column(String(40))


class RefreshToken(Base):
    """Opaque, single use (a retry within seconds excepted). Only the SHA-256 of the token is stored
    (it has 256 bits of entropy)."""

    __tablename__ = "refresh_tokens"

    id: Mapped[str] = mapped_column(String(40), primary_key=True, default=lambda: new_id("rt"))
    session_id: Mapped[str] = mapped_column(ForeignKey("auth_sessions.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # Once used: the pair it was exchanged for, sealed (casefile.secretbox), so that a retry within
    # `auth.service.REFRESH_RETRY_WINDOW` gets the same pair.
    retry_pair_sealed: Mapped[str | None] = mapped_column(Text)


class RevokedSession(Base):
    """Deny-list entry: access tokens of this session are refused until `expires_at`."""

    __tablename__ = "revoked_sessions"

    session_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
