"""`TrashItem`: a read-only mapping over what is in the trash, so that one list (one ListSpec, one
count) covers trashed cases and documents alike. No table of its own: the trash is the
`deleted_at` of the rows themselves, so nothing can disagree with it."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import String, literal_column, select, union_all
from sqlalchemy.orm import Mapped

from casefile.db import Base
from casefile.models.cases import Case
from casefile.models.documents import Document

_cases = select(
    Case.id.label("id"),
    literal_column("'case'", String).label("resource_type"),
    Case.id.label("case_id"),
    Case.deleted_at.label("deleted_at"),
    Case.deleted_by.label("deleted_by"),
).where(Case.deleted_at.is_not(None))

# A document deleted with its case is part of the case's item: restored or purged with it.
_documents = select(
    Document.id,
    literal_column("'document'", String),
    Document.case_id,
    Document.deleted_at,
    Document.deleted_by,
).where(Document.deleted_at.is_not(None), Document.deleted_with_case.is_(False))

_trash = union_all(_cases, _documents).subquery("trash_items")


class TrashItem(Base):
    __table__ = _trash
    __mapper_args__ = {"primary_key": [_trash.c.id]}

    id: Mapped[str]
    resource_type: Mapped[str]
    case_id: Mapped[str]
    deleted_at: Mapped[datetime]
    deleted_by: Mapped[str | None]
