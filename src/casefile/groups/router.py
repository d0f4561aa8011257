from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from casefile import envelope
from casefile.auth.dependencies import AdminPrincipal
from casefile.envelope import DeletedOut, Envelope, PageEnvelope
from casefile.groups import service
from casefile.groups.repository import GROUP_LIST
from casefile.groups.schemas import GroupCreate, GroupMembers, GroupOut, GroupUpdate
from casefile.listing import ListQuery, list_query
from casefile.models import Group
from casefile.request_scope import SessionDep, in_path

# Mounted under /admin, whose router already demands an administrator's access token.
router = APIRouter(prefix="/groups", tags=["groups"])

GroupListQuery = Annotated[ListQuery, Depends(list_query(GROUP_LIST))]
GroupInPath = Annotated[Group, Depends(in_path(service.get_group, "group_id"))]


@router.get("", response_model=PageEnvelope[GroupOut])
async def list_groups(session: SessionDep, query: GroupListQuery) -> JSONResponse:
    """Groups of users, for granting access to cases (or walling them off) as one."""
    return envelope.listed(await service.list_groups(session, query), query, GroupOut.dump)


@router.post("", response_model=Envelope[GroupOut], status_code=201)
async def create_group(body: GroupCreate, admin: AdminPrincipal, session: SessionDep) -> JSONResponse:
    """Create a group (names are unique regardless of case). Emits `group.created`."""
    return envelope.created(GroupOut.dump(await service.create_group(session, admin, body)))


@router.get("/{group_id}", response_model=Envelope[GroupOut])
async def get_group(group: GroupInPath) -> JSONResponse:
    return envelope.ok(GroupOut.dump(group))


@router.patch("/{group_id}", response_model=Envelope[GroupOut])
async def update_group(
    group_id: str, body: GroupUpdate, admin: AdminPrincipal, session: SessionDep
) -> JSONResponse:
    """Rename or describe the group. Emits `group.updated`."""
    group = await service.get_group(session, group_id)
    return envelope.ok(GroupOut.dump(await service.update_group(session, admin, group, body)))


@router.put("/{group_id}/members", response_model=Envelope[GroupOut])
async def set_members(
    group_id: str, body: GroupMembers, admin: AdminPrincipal, session: SessionDep
) -> JSONResponse:
    """Replace the member list (`user_ids`). Emits `group.members_changed`."""
    group = await service.get_group(session, group_id)
    return envelope.ok(GroupOut.dump(await service.set_members(session, admin, group, body.user_ids)))


@router.delete("/{group_id}", response_model=Envelope[DeletedOut])
async def delete_group(admin: AdminPrincipal, group: GroupInPath, session: SessionDep) -> JSONResponse:
    """Delete the group, its grants and its walls. Emits `group.deleted`."""
    await service.delete_group(session, admin, group)
    return envelope.deleted(group.id)
