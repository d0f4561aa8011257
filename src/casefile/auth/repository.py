"""The user lookup sign-in needs: by email, ignoring case (password login, single sign-on, the
first administrator, and the users domain's check that an email is free)."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.models import User


async def find_user_by_email(session: AsyncSession, email: str) -> User | None:
    return await session.scalar(select(User).where(func.lower(User.email) == email.strip().lower()))
