from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from casefile import envelope
from casefile.auth.dependencies import AdminPrincipal
from casefile.cases.schemas import CaseOut
from casefile.documents.schemas import DocumentOut
from casefile.envelope import DeletedOut, Envelope, PageEnvelope
from casefile.listing import ListQuery, list_query
from casefile.models import Case
from casefile.request_scope import RuntimeDep, SessionDep
from casefile.trash import service
from casefile.trash.repository import TRASH_LIST
from casefile.trash.schemas import TrashItemOut

# Mounted under /admin, whose router already demands an administrator's access token.
router = APIRouter(prefix="/trash", tags=["trash"])

TrashListQuery = Annotated[ListQuery, Depends(list_query(TRASH_LIST))]


@router.get("", response_model=PageEnvelope[TrashItemOut])
async def list_trash(
    admin: AdminPrincipal, session: SessionDep, runtime: RuntimeDep, query: TrashListQuery
) -> JSONResponse:
    """Deleted cases and documents (a case's documents go with it), most recently deleted first;
    `purge_after` is when the retention purge removes the item (`retention.trash_days`). Items of
    a matter the caller is walled off from are left out."""
    days = await service.trash_days(session, runtime)
    page = await service.list_trash(session, admin, query)
    return envelope.listed(page, query, lambda item: TrashItemOut.dump_item(item, days))


@router.post("/{item_id}/restore", response_model=Envelope[dict[str, Any]])
async def restore(item_id: str, admin: AdminPrincipal, session: SessionDep) -> JSONResponse:
    """Restore a case (with the documents deleted with it) or a document; answers with it. Emits
    `case.restored` / `document.restored`."""
    item = await service.restore(session, admin, item_id)
    if isinstance(item, Case):
        return envelope.ok(CaseOut.dump_for(item, admin))
    return envelope.ok(DocumentOut.dump_for(item, admin))


@router.delete("/{item_id}", response_model=Envelope[DeletedOut])
async def purge(
    item_id: str, admin: AdminPrincipal, session: SessionDep, runtime: RuntimeDep
) -> JSONResponse:
    """Purge now: the case (with all its documents) or document, and its content, for good. Emits
    `document.purged` / `case.purged`. 409 `LEGAL_HOLD` while the case is under a legal hold."""
    await service.walled_item_check(session, admin, item_id)
    await service.purge(session, runtime, item_id, purged_by=admin.actor_id)
    return envelope.deleted(item_id)
