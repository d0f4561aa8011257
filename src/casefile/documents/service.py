"""Document rules: uploads (streamed, sniffed, content-addressed), reads, updates, deletion (to
the trash) and purge, and the lifetime of shared content files.

Content lifetime: a `blobs` row per stored file. An upload upserts the row (which locks it)
before it places the file; a purge, after its commit, collects the content in a transaction of
its own that locks the row, and removes row and file only if no document refers to the content.
So an upload and a collection of the same content never interleave, and a file is only ever
removed when no committed document needs it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import AsyncIterator, Collection
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from sqlalchemy import ColumnElement, exists, or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from casefile.access.holds import ensure_no_hold
from casefile.access.matter import Level, case_for
from casefile.ai import jobs as ai_jobs
from casefile.audit import service as audit
from casefile.auth.permissions import Principal
from casefile.clock import utcnow
from casefile.config.service import load as load_config
from casefile.db import after_commit, commit_early, dialect_insert
from casefile.documents import erasure
from casefile.documents.repository import DOCUMENT_LIST
from casefile.documents.schemas import (
    TITLE_REQUIRED,
    DocumentUpdate,
    UploadForm,
)
from casefile.documents.upload import FILE_FIELD, ReceivedUpload, receive_upload
from casefile.errors import UnsupportedMediaType, ValidationFailed
from casefile.events import payloads
from casefile.events.outbox import emit
from casefile.listing import ListQuery, Page, fetch_page
from casefile.models import Blob, Case, Document, DocumentVersion, document_not_trashed
from casefile.runtime import Runtime
from casefile.storage import content_removal_allowed
from casefile.storage.sniff import detect

_UNSAFE_NAME_CHARACTERS = re.compile(r"[\x00-\x1f\x7f\"\\/:*?<>|]")


def safe_file_name(name: str) -> str:
    """The last path component, without control or reserved characters; never empty."""
    name = unicodedata.normalize("NFC", name).replace("\\", "/").rsplit("/", 1)[-1]
    name = _UNSAFE_NAME_CHARACTERS.sub("_", name).strip(" .")
    return name[:255] or "document"


async def record_document_read(session: AsyncSession, document: Document) -> None:
    """A document's metadata was read: recorded in the audit trail before the answer."""
    await audit.record_read(
        session, "document.read", resource_type="document", resource_id=document.id, case_id=document.case_id
    )


async def record_download(
    session: AsyncSession, document: Document, content_range: str | None, version: int | None = None
) -> None:
    """A document's content is about to be sent (`content_range`: the part of it, if not all) in
    its current version, or `version`."""
    await audit.record_read(
        session,
        "document.download",
        resource_type="document",
        resource_id=document.id,
        case_id=document.case_id,
        details={"range": content_range, "version": version or document.version},
    )


async def list_documents(session: AsyncSession, case: Case, query: ListQuery) -> Page[Document]:
    conditions = [Document.case_id == case.id, document_not_trashed()]
    page = await fetch_page(session, DOCUMENT_LIST, query, conditions=conditions)
    await audit.record_read(
        session, "document.list", resource_type="case", resource_id=case.id, case_id=case.id
    )
    return page


async def upload_document(
    session: AsyncSession,
    runtime: Runtime,
    actor: Principal,
    case: Case,
    *,
    body: AsyncIterator[bytes],
    content_type: str,
) -> Document:
    """`case` was read before a byte of the body; it is read again once the body is in."""
    case_id = case.id
    config = await load_config(session, runtime.settings)
    uploads = config.uploads
    await commit_early(session)  # and hold no transaction or connection while the body streams in
    async with receive_upload(
        body, content_type, temp_dir=runtime.settings.upload_temp_dir, max_file_bytes=uploads.max_size_bytes
    ) as received:
        form = UploadForm.from_fields(received.fields)
        path, file_name, file_type = checked_file(received, uploads.allowed_types, form.title)
        async with runtime.db.transaction(write=True) as writer:
            # It may have gone, or the caller's access with it, while the body streamed in.
            await case_for(writer, actor, case_id, Level.WRITE)
            await hold_blob(writer, received.sha256, received.size)
            await runtime.store.put(received.sha256, path)
            now = utcnow()
            document = Document(
                case_id=case_id,
                title=form.title or file_name,
                document_type=form.document_type,
                tags=form.tags or [],
                description=form.description,
                file_name=file_name,
                file_size=received.size,
                file_type=file_type,
                sha256=received.sha256,
                # A user id, also for an API key (its creator); the key is named beside it.
                uploaded_by=actor.user_id,
                uploaded_via_key=actor.via_key,
                uploaded_at=now,
                updated_at=now,
                # With AI processing off, nothing will process it: say so rather than "pending".
                processing_status="pending" if config.ai.enabled else "skipped",
            )
            await _add_document(writer, runtime, actor, document, process=config.ai.enabled)
    return document


def checked_file(
    received: ReceivedUpload, allowed_types: Collection[str], title: str | None
) -> tuple[Path, str, str]:
    """The received file's path, safe name and detected type, or why it is refused: the checks of
    an upload and of a new version alike."""
    if received.path is None:
        raise ValidationFailed.on(FILE_FIELD, "File is required")
    if received.size == 0:
        raise ValidationFailed.on(FILE_FIELD, "File is empty")
    file_name = safe_file_name(received.file_name or title or "document")
    file_type = detect(received.head, file_name, complete=received.head_is_complete)
    if file_type is None or file_type not in allowed_types:
        raise UnsupportedMediaType(
            f"This kind of file is not accepted ({file_type or 'unrecognised content'})"
        )
    return received.path, file_name, file_type


async def copy_document(
    session: AsyncSession, runtime: Runtime, actor: Principal, source: Document, case: Case
) -> Document:
    """A new document of `case` with the content and details of `source` (a matter template's
    standard document): the content is shared (content-addressed), its row held so that no
    collection removes it meanwhile. Emits `document.uploaded`; queued for processing like an
    upload."""
    await hold_blob(session, source.sha256, source.file_size)
    config = await load_config(session, runtime.settings)
    now = utcnow()
    document = Document(
        case_id=case.id,
        title=source.title,
        document_type=source.document_type,
        tags=list(source.tags),
        description=source.description,
        file_name=source.file_name,
        file_size=source.file_size,
        file_type=source.file_type,
        sha256=source.sha256,
        uploaded_by=actor.user_id,
        uploaded_via_key=actor.via_key,
        uploaded_at=now,
        updated_at=now,
        processing_status="pending" if config.ai.enabled else "skipped",
    )
    await _add_document(session, runtime, actor, document, process=config.ai.enabled)
    return document


async def _add_document(
    session: AsyncSession, runtime: Runtime, actor: Principal, document: Document, *, process: bool
) -> None:
    """Insert a new document, emit `document.uploaded`, and queue its AI processing when on: one
    path for an upload and a template's copy."""
    session.add(document)
    await session.flush()
    session.add(version_row(document))  # its version 1
    await emit(session, "document.uploaded", payloads.document_uploaded(document))
    if process:
        await ai_jobs.enqueue(
            session,
            runtime,
            kind="document",
            case_id=document.case_id,
            document_id=document.id,
            requested_by=actor.actor_id,
        )


def version_row(document: Document) -> DocumentVersion:
    """The `document_versions` row of the document's current version, from its file columns."""
    return DocumentVersion(
        document_id=document.id,
        version=document.version,
        file_name=document.file_name,
        file_size=document.file_size,
        file_type=document.file_type,
        sha256=document.sha256,
        uploaded_by=document.uploaded_by,
        uploaded_via_key=document.uploaded_via_key,
        uploaded_at=document.uploaded_at,
    )


async def hold_blob(session: AsyncSession, sha256: str, size: int) -> None:
    """Create or lock the content's row until this transaction ends (an upsert takes the row lock
    on PostgreSQL; on SQLite the write transaction is exclusive already)."""
    insert = dialect_insert(session)
    await session.execute(
        insert(Blob)
        .values(sha256=sha256, size=size, created_at=utcnow())
        .on_conflict_do_update(index_elements=[Blob.sha256], set_={"size": size})
    )


async def collect_content(runtime: Runtime, sha256: str) -> None:
    """Remove stored content that no document refers to any more.

    Not while `casefile backup` runs: its database snapshot may still refer to the content, and
    the file must be there when it is copied. The row then stays, and the content is collected
    as an orphan at the next start (`collect_orphaned_content`)."""
    with content_removal_allowed(runtime.settings.data_dir) as allowed:
        if not allowed:
            return
        async with runtime.db.transaction(write=True) as session:
            blob = await session.scalar(select(Blob).where(Blob.sha256 == sha256).with_for_update())
            if blob is None:
                return
            if await session.scalar(select(_content_in_use(sha256))):
                return
            await session.delete(blob)
            await session.flush()
            # Inside the locked transaction: an upload of the same bytes waits on the row, and
            # places its file only after this removal.
            await runtime.store.delete(sha256)


def _content_in_use(sha256: str | InstrumentedAttribute[str]) -> ColumnElement[bool]:
    """Some document has the content as its current version, or as an earlier one."""
    return or_(exists().where(Document.sha256 == sha256), exists().where(DocumentVersion.sha256 == sha256))


async def collect_orphaned_content(runtime: Runtime) -> int:
    """Collect content left behind when a process stopped between a deletion and its collection."""
    async with runtime.db.transaction(write=False) as session:
        orphans = list(await session.scalars(select(Blob.sha256).where(~_content_in_use(Blob.sha256))))
    for sha256 in orphans:
        await collect_content(runtime, sha256)
    return len(orphans)


async def update_document(
    session: AsyncSession, actor: Principal, document: Document, body: DocumentUpdate
) -> Document:
    await ensure_no_hold(session, document.case_id, "changing its documents")
    values = body.model_dump(exclude_unset=True)
    if "title" in values and not values["title"]:
        raise ValidationFailed.on("title", TITLE_REQUIRED)
    if "tags" in values and values["tags"] is None:
        values["tags"] = []
    changes: dict[str, dict[str, Any]] = {
        name: {"from": getattr(document, name), "to": value}
        for name, value in values.items()
        if getattr(document, name) != value
    }
    if not changes:
        return document
    for name, change in changes.items():
        setattr(document, name, change["to"])
    document.updated_at = utcnow()
    await session.flush()
    await emit(session, "document.updated", payloads.document_updated(document, changes, actor.actor_id))
    return document


async def delete_document(session: AsyncSession, actor: Principal, document: Document) -> None:
    """Move the document to the trash (docs/api-conventions.md#trash); its content stays until
    the purge. Not while its case is under a legal hold.

    `document`: loaded with `write` on its case (`access.matter.document_for`), which locks the
    case's row before the document's, the order a case's deletion takes them in: a document and
    its case deleted at once never deadlock."""
    await ensure_no_hold(session, document.case_id, "deleting its documents")
    await trash_documents(session, actor, [document], at=utcnow(), with_case=False)


async def trash_documents(
    session: AsyncSession, actor: Principal, documents: list[Document], *, at: datetime, with_case: bool
) -> None:
    """Move documents to the trash, emitting `document.deleted` for each (`reason` `deleted`, or
    `case_deleted` when `with_case`: they then come back when the case is restored)."""
    reason = "case_deleted" if with_case else "deleted"
    for document in documents:
        document.deleted_at = at
        document.deleted_by = actor.actor_id
        document.deleted_with_case = with_case
        if not with_case:  # a case in the trash takes its summary with it
            await ai_jobs.mark_summary_stale(session, document, "deleted")
        await emit(session, "document.deleted", payloads.document_deleted(document, actor.actor_id, reason))
    await session.flush()


async def purge_documents(
    session: AsyncSession, runtime: Runtime, documents: list[Document], *, purged_by: str | None, reason: str
) -> None:
    """Delete documents for good (emitting `document.purged` for each) and, once that has
    committed, collect their content. The callers have checked for legal holds."""
    contents = await erasure.contents_of(session, [d.id for d in documents])
    for document in documents:
        await emit(session, "document.purged", payloads.document_purged(document, purged_by, reason))
        await session.delete(document)
    await session.flush()
    await erasure.erase_traces(session, documents)
    for sha256 in contents:
        after_commit(session, partial(collect_content, runtime, sha256))


async def documents_of_case(
    session: AsyncSession, case_id: str, *, include_trashed: bool = False
) -> list[Document]:
    statement = select(Document).where(Document.case_id == case_id)
    if not include_trashed:
        statement = statement.where(document_not_trashed())
    return list(await session.scalars(statement))
