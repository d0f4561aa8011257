"""Rate limits (docs/api-conventions.md#rate-limits), counted in a sliding window counter: `limits`'
in the process, a script of ours doing the same count in one round trip in Redis.

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
from limits.aio.storage import MemoryStorage
from redis.asyncio import Redis
from redis.commands.core import AsyncScript
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


# One round trip per counted request on Redis. `limits` counts a hit with one script and reads
# the window for the headers with a second: two round trips, which cost a quarter of a case read's
# CPU (docs/research/bench-notes-2026-11.md, "2026-11-26"). This script does both steps of the same sliding
# window counter at once, on the same two counters per key: it admits the hit (or not) and answers the
# window as it then stands.
# KEYS: the previous window's counter, this window's. ARGV: the limit, the window in ms.
# Answers {admitted 1/0, previous count, previous ms to live, current count, current ms to live}.
_REDIS_HIT = """
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local current_ttl = redis.call('pttl', KEYS[2])
if current_ttl > 0 and current_ttl < window then
    -- this window has ended: it becomes the previous one, and a new one starts at 0
    redis.call('rename', KEYS[2], KEYS[1])
    redis.call('set', KEYS[2], 0, 'PX', current_ttl + window)
end
local previous = tonumber(redis.call('get', KEYS[1])) or 0
local previous_ttl = math.max(redis.call('pttl', KEYS[1]), 0)
local current = tonumber(redis.call('get', KEYS[2])) or 0
current_ttl = math.max(redis.call('pttl', KEYS[2]), 0)
if math.floor(previous * previous_ttl / window) + current + 1 > limit then
    return {0, previous, previous_ttl, current, current_ttl}
end
if redis.call('exists', KEYS[2]) == 1 then
    current = redis.call('incrby', KEYS[2], 1)
else
    redis.call('set', KEYS[2], 1, 'PX', window * 2)
    current, current_ttl = 1, window * 2
end
return {1, previous, previous_ttl, current, current_ttl}
"""


@dataclass(frozen=True)
class Window:
    """A key's two counters after a hit: the previous window's count and seconds to live (its
    weight), this window's count and seconds to live."""

    previous: int
    previous_ttl: float
    current: int
    current_ttl: float


class RateLimiter:
    def __init__(self, settings: Settings, redis: Redis | None) -> None:
        self.items: dict[Bucket, RateLimitItem] = {
            Bucket.USER: parse(settings.rate_limit_user),
            Bucket.API_KEY: parse(settings.rate_limit_api_key),
            Bucket.ADMIN: parse(settings.rate_limit_admin),
            Bucket.LOGIN: parse(settings.rate_limit_login),
        }
        self.memory = MemoryStorage()
        self.redis_hit: AsyncScript | None = None
        self.redis_prefix = f"{settings.redis_key_prefix}:ratelimit"
        if redis is not None and settings.redis_url:
            self.redis_hit = redis.register_script(_REDIS_HIT)

    async def hit(self, bucket: Bucket, identity: str) -> Verdict:
        item = self.items[bucket]
        key = item.key_for(bucket.value, identity)
        if self.redis_hit is not None:
            admitted, window = await _hit_in_redis(self.redis_hit, self.redis_prefix, item, key)
        else:
            # In the process: `limits`' own counter (no I/O, so two calls cost nothing).
            admitted = await self.memory.acquire_sliding_window_entry(key, item.amount, item.get_expiry())
            window = Window(*await self.memory.get_sliding_window(key, item.get_expiry()))
        return _verdict(item, bucket, admitted, window)


async def _hit_in_redis(
    script: AsyncScript, prefix: str, item: RateLimitItem, key: str
) -> tuple[bool, Window]:
    keys = [f"{prefix}:{key}:previous", f"{prefix}:{key}:current"]
    # Redis unreachable: the request fails (500), as it did through `limits`.
    answer = await script(keys=keys, args=[item.amount, item.get_expiry() * 1000])
    admitted, previous, previous_ms, current, current_ms = (int(value) for value in answer)
    return bool(admitted), Window(previous, previous_ms / 1000, current, current_ms / 1000)


def _verdict(item: RateLimitItem, bucket: Bucket, admitted: bool, window: Window) -> Verdict:
    """The headers' figures, as `limits` computes them for the sliding window counter: the count
    is this window's plus the previous one's weighted by the part of it still in the last
    window-long span; the reset is when the next of those requests leaves it."""
    expiry = item.get_expiry()
    weighted = window.previous * window.previous_ttl / expiry + window.current
    now = time.time()
    reset_in = math.inf
    if window.previous:
        reset_in = window.previous_ttl % (expiry / window.previous)
    if window.current:
        reset_in = min(reset_in, window.current_ttl % expiry)
    return Verdict(
        allowed=admitted,
        limit=item.amount,
        remaining=max(0, item.amount - math.floor(weighted)),
        reset_at=now if reset_in == math.inf else now + reset_in,
        bucket=bucket.value,
    )


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
