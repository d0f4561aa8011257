"""User lookups by id (404 when there is none); by email is `casefile.auth.repository`'s."""

from __future__ import annotations

from sqlalchemy import ColumnElement, and_, func, or_
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.db import get_or_404
from casefile.listing import ListSpec, projectable
from casefile.models import User
from casefile.users.schemas import UserOut


async def get_user(session: AsyncSession, user_id: str) -> User:
    return await get_or_404(session, User, user_id, "User not found")


async def _search_users(session: AsyncSession, words: list[str]) -> ColumnElement[bool]:
    # A firm has hundreds of users, not millions: a substring match per word is enough here.
    return and_(
        *(or_(func.lower(User.email).like(f"%{w}%"), func.lower(User.name).like(f"%{w}%")) for w in words)
    )


USER_LIST = ListSpec(
    model=User,
    sortable={"created_at": User.created_at, "email": User.email, "name": User.name, "role": User.role},
    default_sort="created_at",
    tiebreak=User.id,
    output_fields=projectable(UserOut),
    filters={"role": User.role},
    search=_search_users,
)
