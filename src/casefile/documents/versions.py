"""Document versions (docs/api-conventions.md#document-versions, decision 0028).

A document is a series of versions numbered from 1; its own file columns (and `content`) are the
current one's, and every version, the current one included, is a `document_versions` row. A new
version arrives like an upload (streamed, size-limited, sniffed, content-addressed: identical
bytes are stored once), is refused under a legal hold, emits `document.updated` with its number,
and queues the document for processing again: its AI result, made from the version before, reads
`stale: true` until then.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.access.holds import ensure_no_hold
from casefile.access.matter import Level, document_for
from casefile.ai import jobs as ai_jobs
from casefile.audit import service as audit
from casefile.auth.permissions import Principal
from casefile.clock import utcnow
from casefile.config.service import load as load_config
from casefile.db import commit_early
from casefile.documents.repository import VERSION_LIST
from casefile.documents.service import checked_file, hold_blob, version_row
from casefile.documents.upload import FILE_FIELD, receive_upload
from casefile.errors import ErrorDetail, NotFound, ValidationFailed
from casefile.events import payloads
from casefile.events.outbox import emit
from casefile.listing import ListQuery, Page, fetch_page
from casefile.models import Document, DocumentVersion
from casefile.runtime import Runtime

HOLD_ACTION = "adding or removing versions of its documents"


async def add_version(
    session: AsyncSession,
    runtime: Runtime,
    actor: Principal,
    document: Document,
    *,
    body: AsyncIterator[bytes],
    content_type: str,
) -> Document:
    """`document` was read (with write access) before a byte of the body; it is read again, and
    locked with its case, once the body is in."""
    document_id = document.id
    await ensure_no_hold(session, document.case_id, HOLD_ACTION)  # refused before the body is read
    config = await load_config(session, runtime.settings)
    uploads = config.uploads
    await commit_early(session)
    async with receive_upload(
        body, content_type, temp_dir=runtime.settings.upload_temp_dir, max_file_bytes=uploads.max_size_bytes
    ) as received:
        if unknown := [name for name in received.fields if name != FILE_FIELD]:
            raise ValidationFailed(details=[ErrorDetail(name, "Unknown field") for name in unknown])
        path, file_name, file_type = checked_file(received, uploads.allowed_types, None)
        async with runtime.db.transaction(write=True) as writer:
            # It, its case or the caller's access may have gone, or a hold come, meanwhile.
            current = await document_for(writer, actor, document_id, Level.WRITE)
            await ensure_no_hold(writer, current.case_id, HOLD_ACTION)
            await _ensure_current_row(writer, current)
            await hold_blob(writer, received.sha256, received.size)
            await runtime.store.put(received.sha256, path)
            changes = {
                name: {"from": getattr(current, name), "to": value}
                for name, value in (
                    ("version", current.version + 1),
                    ("file_name", file_name),
                    ("file_size", received.size),
                    ("file_type", file_type),
                    ("sha256", received.sha256),
                )
                if getattr(current, name) != value
            }
            now = utcnow()
            current.version += 1
            current.file_name, current.file_size, current.file_type = file_name, received.size, file_type
            current.sha256 = received.sha256
            current.uploaded_by, current.uploaded_via_key = actor.user_id, actor.via_key
            current.updated_at = now
            current.processing_status = "pending" if config.ai.enabled else "skipped"
            row = version_row(current)
            row.uploaded_at = now
            writer.add(row)
            await writer.flush()
            await emit(
                writer, "document.updated", payloads.document_updated(current, changes, actor.actor_id)
            )
            await ai_jobs.mark_summary_stale(writer, current, "replaced")
            if config.ai.enabled:
                await ai_jobs.enqueue(
                    writer,
                    runtime,
                    kind="document",
                    case_id=current.case_id,
                    document_id=current.id,
                    requested_by=actor.actor_id,
                )
    return current


async def _ensure_current_row(session: AsyncSession, document: Document) -> None:
    """A document a previous release's process uploaded during a rolling upgrade has no version
    row yet (decision 0028): its current version gets one before the next is added."""
    found = await session.scalar(
        select(DocumentVersion.id).where(
            DocumentVersion.document_id == document.id, DocumentVersion.version == document.version
        )
    )
    if found is None:
        session.add(version_row(document))
        await session.flush()


async def list_versions(session: AsyncSession, document: Document, query: ListQuery) -> Page[DocumentVersion]:
    """A document's versions, a page at a time (no cap on how many)."""
    page = await fetch_page(
        session, VERSION_LIST, query, conditions=[DocumentVersion.document_id == document.id]
    )
    if not page.rows and query.after is None and await _has_no_rows(session, document):
        page = Page([version_row(document)], 1)  # uploaded by a previous release: _ensure_current_row
    await audit.record_read(
        session,
        "document.versions",
        resource_type="document",
        resource_id=document.id,
        case_id=document.case_id,
    )
    return page


async def get_version(session: AsyncSession, document: Document, number: int) -> DocumentVersion:
    version = await session.scalar(
        select(DocumentVersion).where(
            DocumentVersion.document_id == document.id, DocumentVersion.version == number
        )
    )
    if version is None and number == document.version:
        version = version_row(document)
    if version is None:
        raise NotFound("Version not found")
    return version


async def record_version_read(session: AsyncSession, document: Document, version: DocumentVersion) -> None:
    await audit.record_read(
        session,
        "document.read",
        resource_type="document",
        resource_id=document.id,
        case_id=document.case_id,
        details={"version": version.version},
    )


async def _has_no_rows(session: AsyncSession, document: Document) -> bool:
    found = await session.scalar(
        select(DocumentVersion.id).where(DocumentVersion.document_id == document.id).limit(1)
    )
    return found is None
