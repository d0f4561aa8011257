"""Passages: the stored, embedded pieces of processed documents that search and ask rank.

Their full-text index lives beside the model, made by the migrations: PostgreSQL's generated
`search_vector` column with its GIN index, or SQLite's FTS5 table `passages_fts` kept in step by
triggers.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Integer, LargeBinary, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from casefile.clock import utcnow
from casefile.db import Base, UTCDateTime


class Passage(Base):
    """A passage of a processed document with its embedding. The integer id is the full-text
    index's rowid (stable, unlike SQLite's implicit rowid) and lets the in-process vector index
    catch up by reading only ids above the highest it holds."""

    __tablename__ = "passages"
    # Ids are never reused (SQLite would otherwise hand out a deleted top id again): the vector
    # index catches up by reading ids above the highest it holds.
    __table_args__ = {"sqlite_autoincrement": True}

    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    )
    document_id: Mapped[str] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"), index=True)
    case_id: Mapped[str] = mapped_column(String(40), index=True)
    # The document version the passage was extracted from (null: written before versions, so 1).
    version: Mapped[int | None] = mapped_column(Integer)
    passage_index: Mapped[int] = mapped_column(Integer)  # its place in the document, from 0
    page: Mapped[int] = mapped_column(Integer)
    start: Mapped[int] = mapped_column(Integer)
    end: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    embedding: Mapped[bytes] = mapped_column(LargeBinary)  # EMBEDDING_DIM float32 values, L2-normalised
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
