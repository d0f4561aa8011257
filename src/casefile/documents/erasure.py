"""What a purge erases besides the document's rows (docs/decisions/0028-document-versions.md).

A purged document leaves no text of its own in the database: its rows (versions, passages, AI
jobs) go by cascade; the payloads of its earlier `document.*` events keep only its ids; a case
summary made from it is dropped (it quotes the document); on SQLite the full-text index is
merged so that no deleted term lingers in its segments. Its audit entries never held its text
(`audit.service.record_event` leaves a document event's words out). The content files go after
the commit (`documents.service.collect_content`), every version's."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.audit.service import without_document_text
from casefile.db import dialect_name
from casefile.models import Case, Document, DocumentVersion, Event


async def contents_of(session: AsyncSession, document_ids: Sequence[str]) -> set[str]:
    """The SHA-256 of every version of the documents: what their purge may free."""
    if not document_ids:
        return set()
    ids = list(document_ids)
    current = await session.scalars(select(Document.sha256).where(Document.id.in_(ids)))
    earlier = await session.scalars(
        select(DocumentVersion.sha256).where(DocumentVersion.document_id.in_(ids))
    )
    return set(current) | set(earlier)


async def erase_traces(session: AsyncSession, documents: Sequence[Document]) -> None:
    """After the documents' rows were deleted (in the purge's transaction)."""
    if not documents:
        return
    ids = [d.id for d in documents]
    document_id = Event.data["document_id"].as_string()
    events = await session.execute(
        select(Event.id, Event.data).where(Event.name.like("document.%"), document_id.in_(ids))
    )
    for event_id, data in events.all():
        erased = {**without_document_text(dict(data)), "erased": True}
        await session.execute(update(Event).where(Event.id == event_id).values(data=erased))
    for case_id in {d.case_id for d in documents}:
        case = await session.get(Case, case_id)
        if case is not None and case.ai and _made_from(case.ai, set(ids)):
            case.ai = None  # it quotes the purged document: summarize the case again
    if dialect_name(session) == "sqlite":
        # Deleted rows leave their terms in older FTS5 segments until a merge: merge them all.
        await session.execute(text("INSERT INTO passages_fts(passages_fts) VALUES ('optimize')"))
    await session.flush()


def _made_from(ai: dict[str, object], ids: set[str]) -> bool:
    """Whether a case summary draws on any of the documents (its provenance or its sentences)."""
    provenance = ai.get("provenance")
    summary = ai.get("summary")
    sources = [
        *(provenance.get("documents", []) if isinstance(provenance, dict) else []),
        *(summary.get("sentences", []) if isinstance(summary, dict) else []),
    ]
    return any(isinstance(s, dict) and s.get("document_id") in ids for s in sources)
