"""The deny-list of logged-out sessions: access tokens carrying a listed session id are refused
until they would have expired anyway. In the database by default; in Redis when
CASEFILE_REDIS_URL is set, so that many API processes share it without a database read."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from redis.asyncio import Redis
from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.clock import utcnow
from casefile.models import RevokedSession


class DenyList(Protocol):
    async def deny(self, session: AsyncSession, session_id: str, until: datetime) -> None: ...

    async def is_denied(self, session: AsyncSession, session_id: str) -> bool: ...


class DatabaseDenyList:
    async def deny(self, session: AsyncSession, session_id: str, until: datetime) -> None:
        # Tidy as we go: entries past their expiry protect nothing.
        # (Expired entries deny nothing any more: removing them changes no cached caller.)
        await session.execute(
            delete(RevokedSession)
            .where(RevokedSession.expires_at < utcnow())
            .execution_options(principal_neutral=True)
        )
        if await session.get(RevokedSession, session_id) is None:
            session.add(RevokedSession(session_id=session_id, expires_at=until))
            await session.flush()

    async def is_denied(self, session: AsyncSession, session_id: str) -> bool:
        found = await session.scalar(
            select(RevokedSession.session_id).where(
                RevokedSession.session_id == session_id, RevokedSession.expires_at >= utcnow()
            )
        )
        return found is not None


class RedisDenyList:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def deny(self, session: AsyncSession, session_id: str, until: datetime) -> None:
        ttl = max(1, int((until - utcnow()).total_seconds()) + 1)
        await self.redis.set(f"casefile:denied-session:{session_id}", "1", ex=ttl)

    async def is_denied(self, session: AsyncSession, session_id: str) -> bool:
        return bool(await self.redis.exists(f"casefile:denied-session:{session_id}"))
