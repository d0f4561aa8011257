from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from casefile.clock import new_id
from casefile.db import Base, UTCDateTime


class AuditEntry(Base):
    """One entry of the trail. Rows are only ever inserted: `seq` orders them, and each one's
    `hash` covers its content and the previous entry's hash (`prev_hash`), see `audit.chain`."""

    __tablename__ = "audit_entries"

    id: Mapped[str] = mapped_column(String(40), primary_key=True, default=lambda: new_id("aud"))
    # Given from the chain head under its lock, so unique and gap-free; the database also refuses
    # a second entry with the same number or the same predecessor (no fork can be stored).
    seq: Mapped[int] = mapped_column(BigInteger, unique=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    actor_type: Mapped[str] = mapped_column(String(10))
    actor_id: Mapped[str | None] = mapped_column(String(40))
    user_id: Mapped[str | None] = mapped_column(String(40))
    action: Mapped[str] = mapped_column(String(64))
    resource_type: Mapped[str | None] = mapped_column(String(32))
    resource_id: Mapped[str | None] = mapped_column(String(64))
    case_id: Mapped[str | None] = mapped_column(String(40))
    outcome: Mapped[str] = mapped_column(String(10))
    ip: Mapped[str | None] = mapped_column(String(64))
    user_agent: Mapped[str | None] = mapped_column(String(512))
    request_id: Mapped[str | None] = mapped_column(String(40))
    details: Mapped[dict[str, Any]] = mapped_column(JSON)
    prev_hash: Mapped[str] = mapped_column(String(64), unique=True)
    hash: Mapped[str] = mapped_column(String(64))

    # The list's filters, each with `seq` so that a filtered page is read in order from the index.
    __table_args__ = (
        Index("ix_audit_entries_case_id_seq", "case_id", "seq"),
        Index("ix_audit_entries_actor_id_seq", "actor_id", "seq"),
        Index("ix_audit_entries_action_seq", "action", "seq"),
    )


class AuditChainHead(Base):
    """The chain's one head row (id 1): the last entry's number and hash. Appending locks it
    (`FOR UPDATE` on PostgreSQL; SQLite's writers are serialised by `BEGIN IMMEDIATE`), so
    concurrent writers line up instead of both extending the same entry. It also lets `verify`
    notice that the newest entries were deleted. The database moves it forward with every INSERT
    into `audit_entries` (a trigger, migration 0015)."""

    __tablename__ = "audit_chain_head"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    last_seq: Mapped[int] = mapped_column(BigInteger)
    last_hash: Mapped[str] = mapped_column(String(64))
