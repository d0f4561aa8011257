"""User lookups by id (404 when there is none); by email is `casefile.auth.repository`'s."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from casefile.db import get_or_404
from casefile.models import User


async def get_user(session: AsyncSession, user_id: str) -> User:
    return await get_or_404(session, User, user_id, "User not found")
