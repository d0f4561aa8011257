"""What a matter's export holds, section by section, read as the caller may read it: the documents
(`document_files`, the one place that decides which content goes in), notes with their history,
tasks, deadlines with their calculation, parties with their contacts, and the matter's audit
entries with their inclusion proofs against one signed tree head."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.audit import log_repository as audit_log
from casefile.audit import proofs, repository
from casefile.audit.hashing import entry_fields
from casefile.audit.merkle import leaf_hash
from casefile.audit.repository import AuditFilters
from casefile.auth.permissions import Principal
from casefile.contacts.schemas import ContactOut, PartyOut
from casefile.deadlines.schemas import DeadlineOut
from casefile.deadlines.service import saved_computation
from casefile.documents.schemas import DocumentOut
from casefile.documents.service import documents_of_case, safe_file_name
from casefile.models import (
    AuditEntry,
    AuditTreeHead,
    Deadline,
    Document,
    DocumentVersion,
    Note,
    NoteVersion,
    Party,
    Task,
)
from casefile.notes.schemas import NoteOut, NoteVersionOut
from casefile.tasks.schemas import TaskOut

BATCH = 500


@dataclass(frozen=True)
class DocumentFile:
    """One file of a document in the zip: its content-store key, size and place."""

    document: Document
    version: int
    path: str
    sha256: str
    size: int
    file_type: str


async def document_files(session: AsyncSession, case_id: str) -> list[DocumentFile]:
    """Every version of the matter's documents (not those in the trash), oldest document first,
    each as `documents/<id>/v<n>/<name>`: the one place that says which content an export carries.
    A document an older release uploaded has no version rows until it is revised: its current
    content is its version."""
    documents = sorted(await documents_of_case(session, case_id), key=lambda d: (d.uploaded_at, d.id))
    versions: dict[str, list[DocumentVersion]] = {d.id: [] for d in documents}
    ids = list(versions)
    for start in range(0, len(ids), BATCH):
        rows = await session.scalars(
            select(DocumentVersion)
            .where(DocumentVersion.document_id.in_(ids[start : start + BATCH]))
            .order_by(DocumentVersion.document_id, DocumentVersion.version)
        )
        for row in rows:
            versions[row.document_id].append(row)
    files = []
    for document in documents:
        stored: list[DocumentVersion | Document] = [*versions[document.id]] or [document]
        for item in stored:
            number = item.version if isinstance(item, DocumentVersion) else document.version
            files.append(
                DocumentFile(
                    document=document,
                    version=number,
                    path=f"documents/{document.id}/v{number}/{safe_file_name(item.file_name)}",
                    sha256=item.sha256,
                    size=item.file_size,
                    file_type=item.file_type,
                )
            )
    return files


def document_record(file: DocumentFile, principal: Principal) -> dict[str, Any]:
    return {
        **DocumentOut.dump_for(file.document, principal),
        "version": file.version,
        "path": file.path,
    }


async def notes(session: AsyncSession, case_id: str) -> AsyncIterator[dict[str, Any]]:
    """The matter's notes, oldest first, each with every version it had (`history`)."""
    after: tuple[Any, str] | None = None
    while True:
        statement = select(Note).where(Note.case_id == case_id).order_by(Note.created_at, Note.id)
        if after is not None:
            statement = statement.where(
                or_(Note.created_at > after[0], (Note.created_at == after[0]) & (Note.id > after[1]))
            )
        batch = list(await session.scalars(statement.limit(BATCH)))
        if not batch:
            return
        versions: dict[str, list[dict[str, Any]]] = {note.id: [] for note in batch}
        rows = await session.scalars(
            select(NoteVersion)
            .where(NoteVersion.note_id.in_(list(versions)))
            .order_by(NoteVersion.note_id, NoteVersion.version)
        )
        for version in rows:
            versions[version.note_id].append(NoteVersionOut.dump(version))
        for note in batch:
            yield {**NoteOut.dump(note), "history": versions[note.id]}
        after = (batch[-1].created_at, batch[-1].id)
        session.expunge_all()


async def tasks(session: AsyncSession, case_id: str, principal: Principal) -> list[dict[str, Any]]:
    rows = await session.scalars(select(Task).where(Task.case_id == case_id).order_by(Task.due_sort, Task.id))
    return [TaskOut.dump_for(task, principal) for task in rows]


async def deadlines(session: AsyncSession, case_id: str) -> list[dict[str, Any]]:
    """Each saved deadline with its calculation: every rule's date and the trace of its count."""
    found = []
    rows = list(
        await session.scalars(
            select(Deadline).where(Deadline.case_id == case_id).order_by(Deadline.created_at, Deadline.id)
        )
    )
    for deadline in rows:
        computation = await saved_computation(session, deadline)
        found.append(
            {
                **DeadlineOut.dump(deadline),
                "calculation": computation.model_dump(mode="json") if computation else None,
            }
        )
    return found


async def parties(session: AsyncSession, case_id: str, principal: Principal) -> list[dict[str, Any]]:
    """The parties, each with its contact as the caller may see contacts (`read:contacts`)."""
    rows = await session.scalars(
        select(Party).where(Party.case_id == case_id).order_by(Party.created_at, Party.id)
    )
    return [
        {**PartyOut.dump(party), "contact": ContactOut.dump_for(party.contact, principal)} for party in rows
    ]


# --- the audit entries ---------------------------------------------------------------------------


async def unproven(session: AsyncSession, case_id: str, head: AuditTreeHead | None, before: datetime) -> int:
    """Entries of the matter made up to `before` (the export's own request among them) that `head`
    does not cover yet: not placed in the log, or placed after it."""
    size = head.tree_size if head is not None else 0
    return int(
        await session.scalar(
            select(func.count())
            .select_from(AuditEntry)
            .where(
                AuditEntry.case_id == case_id,
                AuditEntry.at <= before,
                or_(AuditEntry.seq.is_(None), AuditEntry.seq > size),
            )
        )
        or 0
    )


async def latest_head(session: AsyncSession) -> AuditTreeHead | None:
    return await audit_log.latest_head(session)


async def public_key(session: AsyncSession, key_id: str) -> str | None:
    return next((key.public_key for key in await audit_log.keys(session) if key.key_id == key_id), None)


async def audit_entries(
    session: AsyncSession, case_id: str, head: AuditTreeHead
) -> AsyncIterator[dict[str, Any]]:
    """The matter's entries in the log up to `head`, in log order, each as its inclusion proof:
    the entry as the API shows it, its position and the audit path to the head's root."""
    filters = AuditFilters(case_id=case_id)
    async for batch in repository.log_batches(session, up_to=head.tree_size, filters=filters):
        indexes = [(entry.seq or 0) - 1 for entry in batch]
        paths = await proofs.inclusion_paths(session, indexes, head.tree_size)
        for entry, index, path in zip(batch, indexes, paths, strict=True):
            yield {
                "entry": entry_fields(entry),
                "leaf_index": index,
                "leaf_hash": leaf_hash(bytes.fromhex(entry.hash)).hex(),
                "audit_path": path,
            }


def head_record(head: AuditTreeHead, key: str | None) -> dict[str, Any]:
    return {**proofs.head_out(head), "public_key": key}
