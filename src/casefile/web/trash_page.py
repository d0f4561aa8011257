"""The trash (administrators, as `/admin/trash`): deleted matters and documents, most recently
deleted first, with the date the retention purge removes each, and "Restore" (the API's restore:
a matter comes back with the documents deleted with it). Items of a matter the administrator is
walled off from are left out, and restoring one is a 404, exactly as through the API."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from casefile.auth.dependencies import AdminPrincipal
from casefile.listing import build_list_query
from casefile.models import Case
from casefile.request_scope import RuntimeDep, SessionDep
from casefile.trash import service as trash_service
from casefile.trash.repository import TRASH_LIST, item_titles
from casefile.web.security import AdminChanger
from casefile.web.templating import render, viewer

router = APIRouter(include_in_schema=False)

PAGE_SIZE = "50"


@router.get("/app/trash")
async def trash(
    request: Request, principal: AdminPrincipal, session: SessionDep, runtime: RuntimeDep
) -> HTMLResponse:
    cursor = request.query_params.get("cursor", "")
    query = build_list_query(TRASH_LIST, {"limit": PAGE_SIZE, **({"cursor": cursor} if cursor else {})})
    page = await trash_service.list_trash(session, principal, query)
    days = await trash_service.trash_days(session, runtime)
    me = await viewer(session, principal)
    context = {
        "items": page.rows,
        "titles": await item_titles(session, page.rows),
        "days": days,
        "purge": {item.id: item.deleted_at + timedelta(days=days) for item in page.rows},
        "next_url": "/app/trash?" + urlencode({"cursor": page.next_cursor}) if page.next_cursor else "",
    }
    return render(request, "trash.html", context, me=me, nav="trash")


@router.post("/app/trash/{item_id}/restore")
async def restore(item_id: str, principal: AdminChanger, session: SessionDep) -> RedirectResponse:
    item = await trash_service.restore(session, principal, item_id)
    kind = "case" if isinstance(item, Case) else "document"
    return RedirectResponse(f"/app/trash?{urlencode({'restored': kind, 'id': item.id})}", status_code=303)
