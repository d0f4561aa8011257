"""Administration: groups (create, rename, members, delete), through `/admin/groups`' services:
administrators only, each change emitting its `group.*` event."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from casefile.auth.dependencies import AdminPrincipal
from casefile.error_handlers import validated
from casefile.groups import service as groups_service
from casefile.groups.repository import GROUP_LIST
from casefile.groups.schemas import GroupCreate, GroupMembers, GroupUpdate
from casefile.listing import build_list_query
from casefile.request_scope import SessionDep
from casefile.users.service import all_users
from casefile.web.forms import text
from casefile.web.security import AdminChanger
from casefile.web.templating import render, viewer

router = APIRouter(include_in_schema=False)


@router.get("/app/admin/groups")
async def groups(request: Request, principal: AdminPrincipal, session: SessionDep) -> HTMLResponse:
    page = await groups_service.list_groups(
        session, build_list_query(GROUP_LIST, {"limit": "100", "sort": "name", "order": "asc"})
    )
    users = {user.id: user for user in await all_users(session)}
    context = {"groups": page.rows, "users": users, "section": "groups"}
    return render(request, "admin_groups.html", context, me=await viewer(session, principal), nav="admin")


@router.post("/app/admin/groups")
async def create_group(request: Request, principal: AdminChanger, session: SessionDep) -> RedirectResponse:
    form = await request.form()
    body = validated(
        GroupCreate, {"name": text(form, "name"), "description": text(form, "description") or None}
    )
    group = await groups_service.create_group(session, principal, body)
    return RedirectResponse(f"/app/admin/groups/{group.id}?created=1", status_code=303)


@router.get("/app/admin/groups/{group_id}")
async def group_page(
    request: Request, group_id: str, principal: AdminPrincipal, session: SessionDep
) -> HTMLResponse:
    group = await groups_service.get_group(session, group_id)
    context = {"group": group, "users": await all_users(session), "section": "groups"}
    return render(request, "admin_group.html", context, me=await viewer(session, principal), nav="admin")


@router.post("/app/admin/groups/{group_id}")
async def change_group(
    request: Request, group_id: str, principal: AdminChanger, session: SessionDep
) -> RedirectResponse:
    """Name and description (`PATCH`) and the members (`PUT .../members`), from one form."""
    group = await groups_service.get_group(session, group_id)
    form = await request.form()
    update = {"name": text(form, "name"), "description": text(form, "description") or None}
    await groups_service.update_group(session, principal, group, validated(GroupUpdate, update))
    members = [value for value in form.getlist("member") if isinstance(value, str)]
    body = validated(GroupMembers, {"user_ids": members})
    await groups_service.set_members(session, principal, group, body.user_ids)
    return RedirectResponse(f"/app/admin/groups/{group.id}?saved=1", status_code=303)


@router.post("/app/admin/groups/{group_id}/delete")
async def delete_group(group_id: str, principal: AdminChanger, session: SessionDep) -> RedirectResponse:
    group = await groups_service.get_group(session, group_id)
    await groups_service.delete_group(session, principal, group)
    return RedirectResponse("/app/admin/groups?deleted=1", status_code=303)
