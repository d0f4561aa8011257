from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from casefile.clock import new_id, utcnow
from casefile.db import Base, UTCDateTime


class Note(Base):
    """A note on a case or on a contact (exactly one of the two), as it reads now."""

    __tablename__ = "notes"

    id: Mapped[str] = mapped_column(String(40), primary_key=True, default=lambda: new_id("note"))
    case_id: Mapped[str | None] = mapped_column(ForeignKey("cases.id", ondelete="CASCADE"))
    contact_id: Mapped[str | None] = mapped_column(ForeignKey("contacts.id", ondelete="CASCADE"))
    author_id: Mapped[str | None] = mapped_column(String(40))
    body: Mapped[str] = mapped_column(Text)
    format: Mapped[str] = mapped_column(String(20))
    pinned: Mapped[bool] = mapped_column(Boolean, default=False)
    version: Mapped[int] = mapped_column(Integer, default=1)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    __table_args__ = (
        Index("ix_notes_case_id_created_at", "case_id", "created_at", "id"),
        Index("ix_notes_contact_id_created_at", "contact_id", "created_at", "id"),
    )


class NoteVersion(Base):
    """Each version of a note, the first included: the edit history. Written by the note rules
    on every create and change; never changed afterwards."""

    __tablename__ = "note_versions"
    __table_args__ = (UniqueConstraint("note_id", "version"), {"sqlite_autoincrement": True})

    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    )
    note_id: Mapped[str] = mapped_column(ForeignKey("notes.id", ondelete="CASCADE"))
    version: Mapped[int] = mapped_column(Integer)
    body: Mapped[str] = mapped_column(Text)
    format: Mapped[str] = mapped_column(String(20))
    pinned: Mapped[bool] = mapped_column(Boolean)
    edited_by: Mapped[str | None] = mapped_column(String(40))
    edited_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
