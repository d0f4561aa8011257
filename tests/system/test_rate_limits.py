"""Rate limits (docs/api-conventions.md#rate-limits): four buckets, each request in exactly one, headers on
every counted response, and one shared count across processes through Redis."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest
from pydantic import ValidationError

from casefile.ratelimit import Bucket, RateLimiter, Verdict
from casefile.settings import Settings
from tests.support import plain
from tests.support.assertions import api_error, ok
from tests.support.processes import Process
from tests.support.servers import ADMIN_EMAIL, ADMIN_PASSWORD, REDIS_URL, make_settings, redis_available
from tests.support.waiting import well_inside_a_minute

TIGHT = {
    "rate_limit_user": "6/hour",
    "rate_limit_api_key": "3/hour",
    "rate_limit_admin": "4/hour",
    "rate_limit_login": "3/minute",
}


def limit_headers(response: httpx.Response) -> tuple[int, int, int]:
    h = response.headers
    return int(h["x-ratelimit-limit"]), int(h["x-ratelimit-remaining"]), int(h["x-ratelimit-reset"])


def test_login_refresh_and_sign_on_share_the_client_ip_bucket(make_server) -> None:
    server = make_server(**TIGHT)
    well_inside_a_minute()
    with httpx.Client(base_url=server.base) as c:
        first = c.post("/auth/login", json={"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD})
        tokens = ok(first)
        assert limit_headers(first)[:2] == (3, 2)
        # A failed login counts too: that is what slows down password guessing.
        wrong = c.post("/auth/login", json={"email": ADMIN_EMAIL, "password": "wrong-password-123"})
        assert wrong.status_code == 401 and limit_headers(wrong)[:2] == (3, 1)
        refreshed = c.post("/auth/refresh", json={"refresh_token": tokens["refresh_token"]})
        ok(refreshed)
        assert limit_headers(refreshed)[:2] == (3, 0)
        refused = c.post("/auth/login", json={"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD})
        api_error(refused, 429, "RATE_LIMITED")
        limit, remaining, reset = limit_headers(refused)
        assert (limit, remaining) == (3, 0)
        retry_after = int(refused.headers["retry-after"])
        assert 1 <= retry_after <= 60
        assert time.time() < reset <= time.time() + 61
        # The single sign-on endpoints take credentials too, and count in the same bucket.
        api_error(c.get("/auth/oauth/authorize"), 429, "RATE_LIMITED")


def test_each_request_counts_in_exactly_one_bucket(make_server) -> None:
    server = make_server(**TIGHT)
    token = server.login()["token"]
    with httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {token}"}) as c:
        # /admin/* counts in the administrator's bucket (4/hour) ...
        for expected_remaining in (3, 2, 1):
            r = c.get("/admin/webhooks")
            ok(r)
            assert limit_headers(r)[:2] == (4, expected_remaining)
        key = ok(c.post("/admin/api-keys", json={"name": "limits", "permissions": ["read:cases"]}), 201)[
            "key"
        ]
        api_error(c.get("/admin/webhooks"), 429, "RATE_LIMITED")
        # ... and not in the user's: the user bucket (6/hour) is untouched by those five calls.
        r = c.get("/cases")
        ok(r)
        assert limit_headers(r)[:2] == (6, 5)
        # Error answers of a counted request carry the headers too.
        missing = c.get("/cases/case_doesnotexist")
        assert missing.status_code == 404 and limit_headers(missing)[:2] == (6, 4)
    with httpx.Client(base_url=server.base, headers={"X-API-Key": key}) as k:
        seen = [k.get("/cases") for _ in range(4)]
        assert [r.status_code for r in seen] == [200, 200, 200, 429]
        assert [limit_headers(r)[:2] for r in seen] == [(3, 2), (3, 1), (3, 0), (3, 0)]
        # A sliding window counter (casefile.ratelimit): the three hits of this hour's window weigh
        # less than the limit as soon as the next hour's window starts, so that is when to retry.
        to_next_hour = 3600 - time.time() % 3600
        assert abs(int(seen[-1].headers["retry-after"]) - to_next_hour) <= 2
    # The exhausted key leaves the user's bucket where it was.
    with httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {token}"}) as c:
        assert limit_headers(ok_response(c.get("/users/me")))[:2] == (6, 3)


def ok_response(response: httpx.Response) -> httpx.Response:
    ok(response)
    return response


def test_requests_without_credentials_are_not_counted(make_server) -> None:
    server = make_server(**TIGHT)
    with httpx.Client(base_url=server.base) as c:
        for _ in range(8):
            r = c.get("/cases")
            assert r.status_code == 401
            assert "x-ratelimit-limit" not in r.headers
        assert "x-ratelimit-limit" not in plain.get(server.root + "/healthz").headers


def test_limits_in_the_wrong_notation_are_refused_at_start() -> None:
    with pytest.raises(ValidationError, match="not a rate limit"):
        Settings(_env_file=None, rate_limit_user="a thousand an hour")


@pytest.mark.skipif(not redis_available(), reason="Redis is not reachable (CI requires it)")
def test_two_processes_on_one_redis_share_the_count_exactly(
    database: tuple[Path, str | None], tmp_path: Path
) -> None:
    limit = 40
    data_dir, url = database
    settings = make_settings(
        data_dir,
        url,
        redis_url=REDIS_URL,
        redis_key_prefix=f"test-{secrets.token_hex(6)}",  # a fresh namespace for each run
        rate_limit_api_key=f"{limit}/hour",
        worker_enabled=False,
    )
    servers = [Process("serve", settings, tmp_path / f"serve-{i}.log") for i in range(2)]
    try:
        with httpx.Client(base_url=servers[0].base) as c:
            token = ok(c.post("/auth/login", json={"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD}))
            created = c.post(
                "/admin/api-keys",
                json={"name": "shared", "permissions": ["read:cases"]},
                headers={"Authorization": f"Bearer {token['token']}"},
            )
            key = ok(created, 201)["key"]
        statuses = asyncio.run(_concurrent_gets([s.base for s in servers], key, per_server=50))
    finally:
        for server in servers:
            server.stop()
    assert statuses == Counter({200: limit, 429: 100 - limit})


async def _concurrent_gets(bases: list[str], key: str, per_server: int) -> Counter[int]:
    limits = httpx.Limits(max_connections=25)
    clients = [httpx.AsyncClient(base_url=b, headers={"X-API-Key": key}, limits=limits) for b in bases]
    try:
        responses = await asyncio.gather(
            *(client.get("/cases") for client in clients for _ in range(per_server))
        )
    finally:
        for client in clients:
            await client.aclose()
    return Counter(r.status_code for r in responses)


@pytest.mark.skipif(not redis_available(), reason="Redis is not reachable (CI requires it)")
@pytest.mark.slow  # waits for the next window
def test_redis_counts_in_one_script_what_the_process_counts() -> None:
    # Redis's counter (one script, one round trip a hit) and the process's (`limits`) admit the
    # same hits and give the same headers within a window. After it, Redis's previous window
    # still weighs by how much of it overlaps the last second. (Redis's windows start with a
    # key's first hit; the process's are aligned on the clock, so only Redis's weight is known
    # here to the hit.)
    from redis.asyncio import Redis

    async def hits(limiter: RateLimiter, n: int) -> list[Verdict]:
        return [await limiter.hit(Bucket.USER, "user_1") for _ in range(n)]

    def figures(verdicts: list[Verdict]) -> list[tuple[bool, int, int]]:
        return [(v.allowed, v.limit, v.remaining) for v in verdicts]

    async def run() -> None:
        redis = Redis.from_url(REDIS_URL)
        prefix = f"test-{secrets.token_hex(6)}"
        settings = Settings(
            _env_file=None, rate_limit_user="3/second", redis_url=REDIS_URL, redis_key_prefix=prefix
        )
        shared = RateLimiter(settings, redis)
        local = RateLimiter(Settings(_env_file=None, rate_limit_user="3/second"), None)
        try:
            started = time.time()
            in_redis, in_process = await hits(shared, 4), await hits(local, 4)
            expected = [(True, 3, 2), (True, 3, 1), (True, 3, 0), (False, 3, 0)]
            assert figures(in_redis) == figures(in_process) == expected
            for verdict in in_redis + in_process:
                assert started <= verdict.reset_at <= time.time() + 1.0
            assert await redis.keys(f"{prefix}:ratelimit:*")  # counted in Redis, under the prefix
            await asyncio.sleep(1.5)  # the window's 3 hits now weigh about half: 1 counts, 2 fit
            assert figures(await hits(shared, 3)) == [(True, 3, 1), (True, 3, 0), (False, 3, 0)]
        finally:
            await redis.aclose()

    asyncio.run(run())
