"""Groups of users: names unique regardless of case, a member list replaced as a whole. A group
is granted access to cases, or walled off from them, as one (access/matter.py)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.access.matter import remove_subject
from casefile.auth.permissions import Principal
from casefile.clock import utcnow
from casefile.db import get_or_404
from casefile.errors import ErrorDetail, NotFound, ValidationFailed
from casefile.events import payloads
from casefile.events.outbox import emit
from casefile.groups.repository import GROUP_LIST
from casefile.groups.schemas import GroupCreate, GroupUpdate
from casefile.listing import ListQuery, Page, fetch_page
from casefile.models import Group, GroupMember, User

NAME_TAKEN = "A group with this name already exists"


async def get_group(session: AsyncSession, group_id: str) -> Group:
    return await get_or_404(session, Group, group_id, "Group not found")


async def list_groups(session: AsyncSession, query: ListQuery) -> Page[Group]:
    return await fetch_page(session, GROUP_LIST, query)


async def _flush_checking_name(session: AsyncSession, group: Group) -> None:
    # The unique index on lower(name) decides: no check-then-insert race.
    try:
        async with session.begin_nested():
            session.add(group)
            await session.flush()
    except IntegrityError as exc:
        raise ValidationFailed.on("name", NAME_TAKEN) from exc


async def create_group(session: AsyncSession, actor: Principal, body: GroupCreate) -> Group:
    now = utcnow()
    group = Group(name=body.name, description=body.description, created_at=now, updated_at=now, members=[])
    await _flush_checking_name(session, group)
    await emit(session, "group.created", payloads.group_changed(group, actor.actor_id))
    return group


async def update_group(session: AsyncSession, actor: Principal, group: Group, body: GroupUpdate) -> Group:
    values = body.model_dump(exclude_unset=True)
    if "name" in values and values["name"] is None:
        raise ValidationFailed.on("name", "name cannot be null")
    changed = {k: v for k, v in values.items() if getattr(group, k) != v}
    if not changed:
        return group
    for name, value in changed.items():
        setattr(group, name, value)
    group.updated_at = utcnow()
    await _flush_checking_name(session, group)
    await emit(session, "group.updated", payloads.group_changed(group, actor.actor_id))
    return group


async def set_members(session: AsyncSession, actor: Principal, group: Group, user_ids: list[str]) -> Group:
    """Replace the member list. Every id must be a user's; duplicates count once."""
    wanted = list(dict.fromkeys(user_ids))
    known = set(await session.scalars(select(User.id).where(User.id.in_(wanted)))) if wanted else set()
    unknown = [
        ErrorDetail(f"user_ids[{i}]", "No such user") for i, u in enumerate(user_ids) if u not in known
    ]
    if unknown:
        raise NotFound.referenced(unknown)
    if wanted == group.member_ids or sorted(wanted) == group.member_ids:
        return group
    group.members = [GroupMember(group_id=group.id, user_id=user_id) for user_id in sorted(wanted)]
    group.updated_at = utcnow()
    await session.flush()
    await emit(session, "group.members_changed", payloads.group_changed(group, actor.actor_id))
    return group


async def delete_group(session: AsyncSession, actor: Principal, group: Group) -> None:
    """Delete the group with its grants and walls: a wall on a deleted group no longer stands
    (wall its members one by one first if they must stay out)."""
    await remove_subject(session, "group", group.id)
    await emit(session, "group.deleted", payloads.group_changed(group, actor.actor_id))
    await session.delete(group)
    await session.flush()
