"""What one process shares between requests: settings, database engines, the token deny-list."""

from __future__ import annotations

from dataclasses import dataclass

from redis.asyncio import Redis

from casefile.auth.denylist import DatabaseDenyList, DenyList, RedisDenyList
from casefile.db import Database
from casefile.settings import Settings


@dataclass
class Runtime:
    settings: Settings
    db: Database
    deny_list: DenyList
    redis: Redis | None

    @classmethod
    def start(cls, settings: Settings) -> Runtime:
        settings.ensure_data_dir()
        redis = Redis.from_url(settings.redis_url) if settings.redis_url else None
        deny_list: DenyList = RedisDenyList(redis) if redis is not None else DatabaseDenyList()
        return cls(settings=settings, db=Database(settings), deny_list=deny_list, redis=redis)

    async def close(self) -> None:
        await self.db.dispose()
        if self.redis is not None:
            await self.redis.aclose()
