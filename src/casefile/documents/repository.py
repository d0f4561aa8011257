"""The documents queries: how they are listed (`ListSpec`), searched and filtered."""

from __future__ import annotations

from sqlalchemy import ColumnElement, and_, exists, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.db import dialect_name
from casefile.documents.schemas import (
    PROCESSING_STATUSES,
    DocumentOut,
    DocumentVersionOut,
)
from casefile.listing import ListSpec, any_of_ignoring_case, projectable
from casefile.models import Document, DocumentVersion


async def _search_documents(session: AsyncSession, words: list[str]) -> ColumnElement[bool]:
    # Within one case's documents: a substring match per word is enough.
    columns = (Document.title, Document.description, Document.file_name)
    return and_(*(or_(*(func.lower(c).like(f"%{w}%") for c in columns)) for w in words))


def _having_any_tag(session: AsyncSession, tags: list[str]) -> ColumnElement[bool]:
    """Documents with at least one of `tags`, ignoring case (like every comma-separated filter:
    any of). `tags` is a JSON array: its elements are a table function on both databases."""
    unnest = func.json_array_elements_text if dialect_name(session) == "postgresql" else func.json_each
    elements = unnest(Document.tags).table_valued("value")
    return exists().where(any_of_ignoring_case(elements.c.value, tags))


DOCUMENT_LIST = ListSpec(
    model=Document,
    sortable={
        "uploaded_at": Document.uploaded_at,
        "title": func.lower(Document.title),
        "file_size": Document.file_size,
    },
    default_sort="uploaded_at",
    tiebreak=Document.id,
    output_fields=projectable(DocumentOut),
    filters={
        "document_type": Document.document_type,
        "tags": _having_any_tag,
        "processing_status": Document.processing_status,
        "file_type": Document.file_type,
    },
    filter_choices={"processing_status": PROCESSING_STATUSES},
    search=_search_documents,
)


VERSION_LIST = ListSpec(
    model=DocumentVersion,
    sortable={"version": DocumentVersion.version},
    default_sort="version",
    default_order="asc",  # oldest first: the document's history in order
    tiebreak=DocumentVersion.id,
    output_fields=projectable(DocumentVersionOut),
)


async def list_versions(session: AsyncSession, document_id: str) -> list[DocumentVersion]:
    """Every version of a document, oldest first (for a matter export: all versions of each
    document). Access is the caller's to check."""
    statement = (
        select(DocumentVersion)
        .where(DocumentVersion.document_id == document_id)
        .order_by(DocumentVersion.version)
    )
    return list(await session.scalars(statement))
