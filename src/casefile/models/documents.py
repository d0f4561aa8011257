from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    ColumnElement,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    false,
    func,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from casefile.clock import new_id, utcnow
from casefile.db import Base, UTCDateTime


class Document(Base):
    __tablename__ = "documents"

    id: Mapped[str] = mapped_column(String(40), primary_key=True, default=lambda: new_id("doc"))
    case_id: Mapped[str] = mapped_column(ForeignKey("cases.id", ondelete="CASCADE"))
    title: Mapped[str] = mapped_column(String(500))
    document_type: Mapped[str | None] = mapped_column(String(100))
    tags: Mapped[list[str]] = mapped_column(JSON, default=list)
    description: Mapped[str | None] = mapped_column(Text)
    file_name: Mapped[str] = mapped_column(String(255))
    file_size: Mapped[int] = mapped_column(BigInteger)
    file_type: Mapped[str] = mapped_column(String(127))
    sha256: Mapped[str] = mapped_column(String(64), index=True)
    # The user who uploaded it; with an API key, the key's creator, and the key in uploaded_via_key.
    uploaded_by: Mapped[str | None] = mapped_column(String(40))
    uploaded_via_key: Mapped[str | None] = mapped_column(String(40))
    uploaded_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    processing_status: Mapped[str] = mapped_column(String(20), default="pending")
    # The current version's number (docs/api-conventions.md#document-versions): the file columns
    # above describe that version; every version, this one included, is a `document_versions` row.
    version: Mapped[int] = mapped_column(Integer, default=1, server_default=text("1"))
    ai: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    # In the trash since (docs/api-conventions.md#trash): hidden everywhere, content kept until
    # purged. `deleted_with_case`: trashed by its case's deletion, so restoring the case brings it
    # back (a document trashed on its own before stays in the trash).
    deleted_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    deleted_by: Mapped[str | None] = mapped_column(String(40))
    deleted_with_case: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())

    __table_args__ = (
        Index("ix_documents_case_id_uploaded_at", "case_id", "uploaded_at", "id"),
        Index("ix_documents_case_id_title", "case_id", func.lower(title), "id"),
        Index("ix_documents_case_id_file_size", "case_id", "file_size", "id"),
        Index("ix_documents_deleted_at", "deleted_at"),
    )


def document_not_trashed() -> ColumnElement[bool]:
    """SQL condition on `documents`: the document is not in the trash. Every query that reads
    documents (lists, reads, search passages and titles, ask, summaries) adds it."""
    return Document.deleted_at.is_(None)


class Blob(Base):
    """One stored content file, shared by every document with the same SHA-256. Its row is the
    lock that orders uploads and deletions of the same content (see documents.service)."""

    __tablename__ = "blobs"

    sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    size: Mapped[int] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class DocumentVersion(Base):
    """One version of a document's content, from 1 up. The current one's details are also on the
    document (`Document.version`); content is shared by SHA-256 like any document's (`blobs`)."""

    __tablename__ = "document_versions"

    id: Mapped[str] = mapped_column(String(40), primary_key=True, default=lambda: new_id("docver"))
    document_id: Mapped[str] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"))
    version: Mapped[int] = mapped_column(Integer)
    file_name: Mapped[str] = mapped_column(String(255))
    file_size: Mapped[int] = mapped_column(BigInteger)
    file_type: Mapped[str] = mapped_column(String(127))
    sha256: Mapped[str] = mapped_column(String(64), index=True)
    uploaded_by: Mapped[str | None] = mapped_column(String(40))
    uploaded_via_key: Mapped[str | None] = mapped_column(String(40))
    uploaded_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    __table_args__ = (UniqueConstraint("document_id", "version"),)
