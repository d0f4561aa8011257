"""Users: creation, reads, updates (role and active emit `user.permissions_changed`), deletion."""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.access.matter import remove_subject
from casefile.audit import service as audit
from casefile.auth import passwords
from casefile.auth.permissions import Principal
from casefile.auth.repository import find_user_by_email
from casefile.auth.service import revoke_user_sessions
from casefile.clock import time_zones, utcnow
from casefile.db import lock_for_transaction
from casefile.errors import Conflict, ValidationFailed, admin_token_needed_for
from casefile.events import payloads
from casefile.events.outbox import emit
from casefile.listing import ListQuery, Page, fetch_page
from casefile.models import User
from casefile.runtime import Runtime
from casefile.users.repository import USER_LIST
from casefile.users.schemas import UserCreate, UserUpdate

log = logging.getLogger(__name__)

EMAIL_TAKEN = "Email is already registered"
# Said at start-up when nobody can sign in, and by `GET /auth/setup` for a sign-in page to show.
NO_ADMINISTRATOR = (
    "No administrator exists yet, so nobody can sign in: create one with "
    "`casefile users create-admin --email you@example.com` (it asks for the password), or start "
    "`casefile serve` once with CASEFILE_ADMIN_EMAIL and CASEFILE_ADMIN_PASSWORD set."
)


async def create_user(session: AsyncSession, *, email: str, name: str, password: str, role: str) -> User:
    user = User(
        email=email.strip(), name=name, role=role, password_hash=await passwords.hash_password(password)
    )
    session.add(user)
    try:
        async with session.begin_nested():
            await session.flush()
    except IntegrityError as exc:
        raise ValidationFailed.on("email", EMAIL_TAKEN) from exc
    # No event is emitted for a new user, so the trail records it here.
    audit.record(
        session,
        "user.created",
        resource_type="user",
        resource_id=user.id,
        details={"email": user.email, "role": role},
    )
    return user


def _require_admin_token(actor: Principal, action: str) -> None:
    """Who is an administrator, anyone's role, and an administrator's password and status change
    only with an administrator's own access token, never with an API key, whatever it holds: a
    key with `write:users` must not make or take over an administrator (docs/api-conventions.md#users)."""
    if not actor.is_admin_user:
        raise admin_token_needed_for(action)


async def create_user_for(session: AsyncSession, actor: Principal, body: UserCreate) -> User:
    """`POST /users`: `create_user`, with the administrator rule."""
    if body.role == "admin":
        _require_admin_token(actor, "Creating an administrator")
    return await create_user(
        session, email=body.email, name=body.name, password=body.password, role=body.role
    )


async def list_users(session: AsyncSession, query: ListQuery) -> Page[User]:
    return await fetch_page(session, USER_LIST, query)


async def _active_admins(session: AsyncSession) -> int:
    """The number of active administrators, counted under a lock held until the transaction ends:
    two changes that each leave "another" administrator (two admins demoting each other at once)
    then run one after the other, and the second sees the first."""
    await lock_for_transaction(session, "users.active_admins")
    return await session.scalar(select(func.count()).where(User.role == "admin", User.active.is_(True))) or 0


async def update_user(
    session: AsyncSession, runtime: Runtime, actor: Principal, user: User, patch: UserUpdate
) -> User:
    changes: dict[str, dict[str, Any]] = {}
    values = patch.model_dump(exclude_unset=True)
    for name in ("name", "role", "active"):
        if name in values and values[name] is not None and values[name] != getattr(user, name):
            changes[name] = {"from": getattr(user, name), "to": values[name]}
    if "role" in changes:
        _require_admin_token(actor, "Changing a role")
    if user.role == "admin" and ("active" in changes or values.get("password")):
        _require_admin_token(actor, "Changing an administrator's password or status")
    loses_admin = ("role" in changes and user.role == "admin") or changes.get("active", {}).get("to") is False
    if loses_admin and user.role == "admin" and user.active and await _active_admins(session) <= 1:
        raise Conflict("The last active administrator cannot be demoted or disabled")
    for name, change in changes.items():
        setattr(user, name, change["to"])
    password = values.get("password")
    if password:
        user.password_hash = await passwords.hash_password(password)
        await revoke_user_sessions(session, runtime, user.id, reason="password_changed")
    if changes or password:
        user.updated_at = utcnow()
        # Role and status changes also emit user.permissions_changed (recorded as that event).
        audit.record(
            session,
            "user.updated",
            resource_type="user",
            resource_id=user.id,
            details={"changes": changes, "password_changed": bool(password)},
        )
    if changes.get("active", {}).get("to") is False:
        await revoke_user_sessions(session, runtime, user.id, reason="user_disabled")
    permission_changes = {k: v for k, v in changes.items() if k in ("role", "active")}
    if permission_changes:
        await emit(
            session,
            "user.permissions_changed",
            payloads.user_permissions_changed(user, permission_changes, actor.actor_id),
        )
    await session.flush()
    return user


async def set_time_zone(session: AsyncSession, principal: Principal, zone: str | None) -> None:
    """The signed-in user's own time zone for the web app (docs/web-app.md#time-zones): an IANA
    name, or None for "my browser's". A preference, not part of the user's representation."""
    if zone is not None and zone not in time_zones():
        raise ValidationFailed.on("time_zone", "Pick a time zone from the list")
    user = await session.get(User, principal.id, with_for_update=True)
    if user is None or user.time_zone == zone:
        return
    audit.record(
        session,
        "user.updated",
        resource_type="user",
        resource_id=user.id,
        details={"changes": {"time_zone": {"from": user.time_zone, "to": zone}}, "password_changed": False},
    )
    user.time_zone = zone
    await session.flush()


async def delete_user(session: AsyncSession, actor: Principal, user: User) -> None:
    if user.role == "admin":
        _require_admin_token(actor, "Deleting an administrator")
    if user.id == actor.id:
        raise Conflict("You cannot delete yourself")
    if user.role == "admin" and user.active and await _active_admins(session) <= 1:
        raise Conflict("The last active administrator cannot be deleted")
    await remove_subject(session, "user", user.id)
    await session.delete(user)
    await session.flush()
    audit.record(
        session, "user.deleted", resource_type="user", resource_id=user.id, details={"email": user.email}
    )


async def administrator_exists(session: AsyncSession) -> bool:
    found = await session.scalar(select(User.id).where(User.role == "admin", User.active.is_(True)).limit(1))
    return found is not None


async def reset_password(session: AsyncSession, runtime: Runtime, user: User, password: str) -> None:
    """Set a new password from the command line (`casefile users reset-password`): the password
    rules of the API, and the user's sessions end, as for a change through the API."""
    checked = UserUpdate(password=password).password
    assert checked is not None
    user.password_hash = await passwords.hash_password(checked)
    user.updated_at = utcnow()
    await revoke_user_sessions(session, runtime, user.id, reason="password_changed")
    audit.record(
        session,
        "user.updated",
        resource_type="user",
        resource_id=user.id,
        details={"changes": {}, "password_changed": True, "by": "command line"},
    )


async def all_users(session: AsyncSession) -> list[User]:
    """Every user, oldest first (`casefile users list`: a firm has hundreds, not millions)."""
    return list(await session.scalars(select(User).order_by(User.created_at, User.id)))


async def ensure_admin(session: AsyncSession, *, email: str, password: str) -> bool:
    """Create the administrator named by the settings unless a user with that email exists.
    Returns whether one was created."""
    if await find_user_by_email(session, email) is not None:
        return False
    payload = UserCreate(email=email, name="Administrator", password=password, role="admin")
    try:
        await create_user(
            session, email=payload.email, name=payload.name, password=payload.password, role="admin"
        )
    except ValidationFailed:
        return False  # another process created it at the same moment
    log.info("created administrator %s", email)
    return True
