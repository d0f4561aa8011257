from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Index, Integer, LargeBinary, String
from sqlalchemy.orm import Mapped, mapped_column

from casefile.db import Base, UTCDateTime


class IdempotencyKey(Base):
    """One `Idempotency-Key` of one caller (`casefile.idempotency`): reserved in the transaction of
    the request that first sent it, then holding that request's response for 24 h."""

    __tablename__ = "idempotency_keys"

    principal_id: Mapped[str] = mapped_column(String(80), primary_key=True)
    key: Mapped[str] = mapped_column(String(255), primary_key=True)
    method: Mapped[str] = mapped_column(String(10))
    path: Mapped[str] = mapped_column(String(2048))
    # sha256 of the method, path and body: the same key with another request is refused.
    request_hash: Mapped[str] = mapped_column(String(64))
    # None while the first request runs; then its answer.
    status_code: Mapped[int | None] = mapped_column(Integer)
    headers: Mapped[list[list[str]] | None] = mapped_column(JSON)
    body: Mapped[bytes | None] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)

    __table_args__ = (Index("ix_idempotency_keys_expires_at", "expires_at"),)

    def replayable(self) -> dict[str, Any]:
        return {"status_code": self.status_code, "headers": self.headers, "body": self.body}
