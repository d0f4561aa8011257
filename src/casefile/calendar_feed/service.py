"""Feed tokens and the feed. The token is the only credential of the feed URL (calendar apps send
no other), so it is long and random (256 bits), stored only as its SHA-256, shown once, and
revocable; making a new one revokes the old. The feed shows what the user could see through the
API now: open tasks assigned to them, on cases visible to them (`cases.access.visible_to`), and
nothing once the user is disabled or has lost `read:cases`."""

from __future__ import annotations

import hashlib
import secrets

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.access.matter import visible_to
from casefile.audit import service as audit
from casefile.auth.permissions import ROLE_PERMISSIONS, Permission, Principal
from casefile.calendar_feed.feed import build_feed
from casefile.clock import utcnow
from casefile.errors import NotFound
from casefile.models import CalendarToken, Case, Task, User

MAX_EVENTS = 2000  # the soonest ones; a calendar app fetching this every hour needs no more


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


async def new_token(session: AsyncSession, user_id: str) -> str:
    token = secrets.token_urlsafe(32)
    # Rotations of one user's token run one after another: the user's row is locked first
    # (PostgreSQL; SQLite's writers already run one at a time). Without it two concurrent ones
    # both delete nothing, and the second insert breaks the one-token-per-user key.
    await session.execute(select(User.id).where(User.id == user_id).with_for_update())
    await session.execute(delete(CalendarToken).where(CalendarToken.user_id == user_id))
    session.add(CalendarToken(user_id=user_id, token_hash=_hash(token), created_at=utcnow()))
    await session.flush()
    return token


async def revoke_token(session: AsyncSession, user_id: str) -> bool:
    result = await session.execute(delete(CalendarToken).where(CalendarToken.user_id == user_id))
    return bool(getattr(result, "rowcount", 0))


async def feed(session: AsyncSession, token: str) -> bytes:
    """The feed of `token`'s user; 404 for an unknown or revoked token, or a disabled user."""
    user = await session.scalar(
        select(User)
        .join(CalendarToken, CalendarToken.user_id == User.id)
        .where(CalendarToken.token_hash == _hash(token))
    )
    if user is None or not user.active:
        raise NotFound("Calendar not found")
    principal = Principal(kind="user", id=user.id, role=user.role, permissions=ROLE_PERMISSIONS[user.role])
    rows: list[tuple[Task, Case]] = []
    if principal.can(Permission.READ_CASES):
        result = await session.execute(
            select(Task, Case)
            .join(Case, Case.id == Task.case_id)
            .where(
                Task.assignee_id == user.id,
                Task.status == "open",
                Task.due_date.is_not(None),
                visible_to(principal),
            )
            .order_by(Task.due_sort, Task.id)
            .limit(MAX_EVENTS)
        )
        rows = [(task, case) for task, case in result]
    # Read with the token, not a signed-in caller: the entry names the token's user.
    await audit.record_read(
        session,
        "calendar.read",
        resource_type="user",
        resource_id=user.id,
        details={"case_ids": sorted({case.id for _, case in rows}), "tasks": len(rows)},
        actor=audit.Actor("user", user.id, user.id),
    )
    return build_feed(user.name, rows)
