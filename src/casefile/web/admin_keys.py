"""Administration: API keys (create, with the key shown once; revoke), through `/admin/api-keys`'
services. The key is in the answer to its creation only (stored hashed): the page that shows it is
not cached (`Cache-Control: no-store`, as every page) and it is never shown again."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.api_keys import service as keys_service
from casefile.api_keys.repository import API_KEY_LIST
from casefile.api_keys.schemas import ApiKeyCreate
from casefile.auth.dependencies import AdminPrincipal
from casefile.auth.permissions import Permission, Principal
from casefile.error_handlers import validated
from casefile.listing import build_list_query
from casefile.request_scope import SessionDep
from casefile.web.forms import lines, text
from casefile.web.security import AdminChanger
from casefile.web.templating import render, viewer

router = APIRouter(include_in_schema=False)

PERMISSIONS = tuple(permission.value for permission in Permission)


async def _page(
    request: Request, session: AsyncSession, principal: Principal, created: dict[str, Any] | None
) -> HTMLResponse:
    page = await keys_service.list_api_keys(
        session, build_list_query(API_KEY_LIST, {"limit": "100", "sort": "created_at", "order": "desc"})
    )
    context = {"keys": page.rows, "permissions": PERMISSIONS, "created": created, "section": "api-keys"}
    return render(request, "admin_keys.html", context, me=await viewer(session, principal), nav="admin")


@router.get("/app/admin/api-keys")
async def api_keys(request: Request, principal: AdminPrincipal, session: SessionDep) -> HTMLResponse:
    return await _page(request, session, principal, None)


@router.post("/app/admin/api-keys")
async def create_api_key(request: Request, principal: AdminChanger, session: SessionDep) -> HTMLResponse:
    form = await request.form()
    expires = text(form, "expires_on")
    values: dict[str, Any] = {
        "name": text(form, "name"),
        "permissions": [p for p in form.getlist("permission") if isinstance(p, str)],
        # A date: the key works until the end of that day (UTC).
        "expires_at": f"{expires}T23:59:59Z" if expires else None,
        "case_ids": lines(text(form, "case_ids")) or None,
    }
    api_key, key = await keys_service.create_api_key(session, principal, validated(ApiKeyCreate, values))
    return await _page(request, session, principal, {"name": api_key.name, "key": key})


@router.post("/app/admin/api-keys/{key_id}/revoke")
async def revoke_api_key(key_id: str, principal: AdminChanger, session: SessionDep) -> RedirectResponse:
    api_key = await keys_service.get_api_key(session, key_id)
    await keys_service.revoke_api_key(session, api_key)
    return RedirectResponse("/app/admin/api-keys?revoked=1", status_code=303)
