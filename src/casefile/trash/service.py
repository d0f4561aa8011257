"""Restoring and purging what is in the trash, by hand and by the retention purge.

An item is a trashed case (with the documents deleted with it) or a document trashed on its own.
A purge deletes the rows for good and, after the commit, their content (when no other document
shares it: documents.service.collect_content). A case under an active legal hold is never purged,
nor any of its documents, by an administrator or by retention.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.access.holds import ensure_no_hold, lock_case
from casefile.access.matter import ensure_outside_walls, outside_walls
from casefile.auth.permissions import Principal
from casefile.billing.repository import financial_records
from casefile.clock import utcnow
from casefile.config.service import load as load_config
from casefile.db import is_write_session
from casefile.documents import service as documents_service
from casefile.errors import Conflict, LegalHoldActive, NotFound
from casefile.events import payloads
from casefile.events.outbox import emit
from casefile.listing import ListQuery, Page, fetch_page
from casefile.models import Case, Document, TrashItem
from casefile.runtime import Runtime
from casefile.trash.repository import TRASH_LIST

log = logging.getLogger(__name__)

# Items purged per retention sweep at most; the next sweep takes the rest.
RETENTION_BATCH = 500


async def trash_days(session: AsyncSession, runtime: Runtime) -> int:
    return (await load_config(session, runtime.settings)).retention.trash_days


async def list_trash(session: AsyncSession, reader: Principal, query: ListQuery) -> Page[TrashItem]:
    """The trash, without the items of matters the reader is walled off from."""
    return await fetch_page(session, TRASH_LIST, query, conditions=[outside_walls(reader, TrashItem.case_id)])


async def walled_item_check(session: AsyncSession, reader: Principal, item_id: str) -> None:
    """404 "Not in the trash" for a case, or a document of a case, the reader is walled off
    from: as for an item that is not there (docs/api-conventions.md#administrators-behind-walls)."""
    case_id = await session.scalar(select(Document.case_id).where(Document.id == item_id)) or item_id
    await ensure_outside_walls(session, reader, case_id, "Not in the trash")


async def _item(session: AsyncSession, item_id: str) -> Case | Document:
    """The trashed case or document `item_id`, its row locked in a writing transaction (see
    db.get_or_404), or 404; 409 for a document that went to the trash with its case."""
    lock = is_write_session(session)
    if lock:  # a document's case first: the order every path locks them in (holds.lock_case)
        case_id = await session.scalar(select(Document.case_id).where(Document.id == item_id))
        if case_id is not None:
            await lock_case(session, case_id)
    for_update = True if lock else None
    case = await session.get(Case, item_id, with_for_update=for_update, populate_existing=lock)
    if case is not None and case.deleted_at is not None:
        return case
    document = await session.get(Document, item_id, with_for_update=for_update, populate_existing=lock)
    if document is not None and document.deleted_at is not None:
        if document.deleted_with_case:
            raise Conflict(
                f"This document was deleted with its case {document.case_id}: restore or purge the case"
            )
        return document
    raise NotFound("Not in the trash")


async def restore(session: AsyncSession, actor: Principal, item_id: str) -> Case | Document:
    """Take a case (with the documents deleted with it) or a document out of the trash. Emits
    `case.restored` and `document.restored` for each document that comes back."""
    await walled_item_check(session, actor, item_id)
    item = await _item(session, item_id)
    if isinstance(item, Document):
        case = await session.get(Case, item.case_id)
        if case is not None and case.deleted_at is not None:
            raise Conflict(f"Its case {item.case_id} is in the trash: restore the case first")
        _untrash(item)
        await session.flush()
        await emit(session, "document.restored", payloads.document_restored(item, actor.actor_id, "restored"))
        return item
    documents = await documents_service.documents_of_case(session, item.id, include_trashed=True)
    returning = [d for d in documents if d.deleted_with_case]
    item.deleted_at = None
    item.deleted_by = None
    for document in returning:
        _untrash(document)
    await session.flush()
    for document in returning:
        await emit(
            session,
            "document.restored",
            payloads.document_restored(document, actor.actor_id, "case_restored"),
        )
    document_ids = [d.id for d in returning]
    await emit(session, "case.restored", payloads.case_restored(item, actor.actor_id, document_ids))
    return item


def _untrash(document: Document) -> None:
    document.deleted_at = None
    document.deleted_by = None
    document.deleted_with_case = False


async def purge(
    session: AsyncSession, runtime: Runtime, item_id: str, *, purged_by: str | None, reason: str = "purged"
) -> None:
    """Delete a trashed item for good, with its content: a case with all its documents. Emits
    `document.purged` for each document and `case.purged`. 409 LEGAL_HOLD under a hold."""
    item = await _item(session, item_id)
    await _purge(session, runtime, item, purged_by=purged_by, reason=reason)


async def _purge(
    session: AsyncSession, runtime: Runtime, item: Case | Document, *, purged_by: str | None, reason: str
) -> None:
    if isinstance(item, Document):
        await ensure_no_hold(session, item.case_id, "purging its documents")
        await documents_service.purge_documents(session, runtime, [item], purged_by=purged_by, reason=reason)
        return
    await ensure_no_hold(session, item.id, "purging the case")
    # Accounting records outlive the matter: purging it would delete them (docs/billing.md).
    if reason_kept := await financial_records(session, item.id):
        raise Conflict(f"The case cannot be purged: {reason_kept}")
    documents = await documents_service.documents_of_case(session, item.id, include_trashed=True)
    document_reason = "retention" if reason == "retention" else "case_purged"
    await documents_service.purge_documents(
        session, runtime, documents, purged_by=purged_by, reason=document_reason
    )
    await documents_service.remove_exports(session, runtime, {item.id})
    await emit(session, "case.purged", payloads.case_purged(item, purged_by, reason))
    await session.delete(item)
    await session.flush()


async def purge_expired(runtime: Runtime) -> int:
    """The retention purge: every item in the trash for longer than `retention.trash_days`, each
    in a transaction of its own (one held or failing item does not stop the others). Items of
    held cases stay until the hold is released. Returns how many items were purged."""
    async with runtime.db.transaction(write=False) as session:
        cutoff = utcnow() - timedelta(days=await trash_days(session, runtime))
        expired = list(
            await session.scalars(
                select(TrashItem.id)
                .where(TrashItem.deleted_at < cutoff)
                .order_by(TrashItem.deleted_at, TrashItem.id)
                .limit(RETENTION_BATCH)
            )
        )
    purged = 0
    for item_id in expired:
        try:
            async with runtime.db.transaction(write=True) as session:
                item = await _item(session, item_id)
                # Restored and deleted again since the list was read: its clock started again.
                if item.deleted_at is None or item.deleted_at >= cutoff:
                    continue
                await _purge(session, runtime, item, purged_by=None, reason="retention")
            purged += 1
        except (LegalHoldActive, NotFound, Conflict):
            continue  # held (kept until released), or restored or purged meanwhile
    if purged:
        log.info("retention purge: %d item(s) older than the trash period removed", purged)
    return purged
