"""Rate limits (docs/api-conventions.md#rate-limits), counted by the `limits` library in a sliding
window counter.

Four buckets; a request counts in exactly one:

- `/admin/*`: the administrator's bucket (`rate_limit_admin`), keyed by the caller;
- `/auth/login`, `/auth/refresh` (and the single sign-on endpoints): the client IP's bucket
  (`rate_limit_login`);
- any other authenticated request: its user's bucket (`rate_limit_user`) or its API key's
  (`rate_limit_api_key`).

The counters live in the process, or in Redis when `CASEFILE_REDIS_URL` is set, so that every
process of a deployment shares one count. The sliding window counter keeps two counters per key
(this window's and the previous one's) and weighs the previous one by how much of it still
overlaps the last window-long span: a hit costs the same whatever the limit, and no thread (the
moving window kept one timestamp per request, copied its list on every hit and sorted it in a
thread). The count is an approximation of the exact moving window that assumes the previous
window's requests were evenly spread; a burst that fits N in a fresh window is admitted and the
N+1st refused, as before.

The result of the check is kept on the request's scope; `RateLimitHeadersMiddleware` writes the
`X-RateLimit-*` headers (and `Retry-After` on 429) on whatever response the request ends with.
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from enum import StrEnum

from limits import RateLimitItem, parse
from limits.aio.storage import MemoryStorage, RedisStorage, Storage
from limits.aio.strategies import SlidingWindowCounterRateLimiter
from redis.asyncio import Redis
from starlette.types import Receive, Scope, Send

from casefile.errors import RateLimited
from casefile.middleware import HttpMiddleware, with_headers
from casefile.routing import CURRENT_PREFIX
from casefile.settings import Settings

SCOPE_KEY = "rate_limit"


class Bucket(StrEnum):
    USER = "user"
    API_KEY = "api_key"
    ADMIN = "admin"
    LOGIN = "login"


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    limit: int
    remaining: int
    reset_at: float  # unix seconds: when the count has fallen back enough to admit a request
    bucket: str = ""  # which bucket counted it (the rejections metric is by bucket)

    def headers(self, now: float) -> dict[str, str]:
        headers = {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(math.ceil(self.reset_at)),
        }
        if not self.allowed:
            headers["Retry-After"] = str(max(1, math.ceil(self.reset_at - now)))
        return headers


class RateLimiter:
    def __init__(self, settings: Settings, redis: Redis | None) -> None:
        self.items: dict[Bucket, RateLimitItem] = {
            Bucket.USER: parse(settings.rate_limit_user),
            Bucket.API_KEY: parse(settings.rate_limit_api_key),
            Bucket.ADMIN: parse(settings.rate_limit_admin),
            Bucket.LOGIN: parse(settings.rate_limit_login),
        }
        self.storage: Storage
        if redis is not None and settings.redis_url:
            self.storage = RedisStorage(
                _async_redis_uri(settings.redis_url),
                implementation="redispy",
                key_prefix=f"{settings.redis_key_prefix}:ratelimit",
                wrap_exceptions=True,
                # The process's own Redis connections, closed with the runtime. (`limits` types
                # its options as scalars, but its redis-py bridge takes a pool by this name.)
                connection_pool=redis.connection_pool,  # type: ignore[arg-type]
            )
        else:
            self.storage = MemoryStorage()
        self.strategy = SlidingWindowCounterRateLimiter(self.storage)

    async def hit(self, bucket: Bucket, identity: str) -> Verdict:
        item = self.items[bucket]
        allowed = await self.strategy.hit(item, bucket.value, identity)
        stats = await self.strategy.get_window_stats(item, bucket.value, identity)
        return Verdict(
            allowed=allowed,
            limit=item.amount,
            remaining=max(0, stats.remaining),
            reset_at=stats.reset_time,
            bucket=bucket.value,
        )


def _async_redis_uri(url: str) -> str:
    """`limits` picks its asyncio Redis client by the `async+` scheme prefix."""
    return url if url.startswith("async+") else f"async+{url}"


async def enforce(limiter: RateLimiter, scope: Scope, bucket: Bucket, identity: str) -> None:
    """Count this request in `bucket`; raise 429 if it is over the limit. Once per request."""
    state = scope.setdefault("state", {})
    if SCOPE_KEY in state:
        return
    verdict = await limiter.hit(bucket, identity)
    state[SCOPE_KEY] = verdict
    if not verdict.allowed:
        raise RateLimited(f"Rate limit of {verdict.limit} requests exceeded; retry later")


ADMIN_PREFIX = CURRENT_PREFIX + "/admin"


def is_admin_path(path: str) -> bool:
    """`/api/v1/admin/...` (the unversioned alias `/api/admin/...` is rewritten to it before
    routing: casefile.routing.ApiAliasMiddleware)."""
    return path == ADMIN_PREFIX or path.startswith(ADMIN_PREFIX + "/")


class RateLimitHeadersMiddleware(HttpMiddleware):
    """Put the rate-limit headers on every response of a request that was counted."""

    def handle(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        def headers() -> dict[str, str]:
            verdict: Verdict | None = scope.get("state", {}).get(SCOPE_KEY)
            return {} if verdict is None else verdict.headers(time.time())

        return self.app(scope, receive, with_headers(send, headers))
