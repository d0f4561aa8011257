"""User lookups: by id (404 when there is none) and by email (sign-in, single sign-on, the first
administrator)."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.db import get_or_404
from casefile.users.models import User


async def get_user(session: AsyncSession, user_id: str) -> User:
    return await get_or_404(session, User, user_id, "User not found")


async def find_user_by_email(session: AsyncSession, email: str) -> User | None:
    return await session.scalar(select(User).where(func.lower(User.email) == email.strip().lower()))
