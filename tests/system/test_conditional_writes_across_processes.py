"""`If-Match` across processes (docs/api-conventions.md#etags): writers on several API processes
sharing one PostgreSQL database, all naming the same version, and exactly one of them wins; the
others get 412 and their writes are lost to nobody."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import httpx
import pytest

from tests.support.assertions import ok
from tests.support.processes import several_api_processes
from tests.support.servers import redis_available


@pytest.mark.skipif(not redis_available(), reason="Redis is not reachable (CI requires it)")
def test_twenty_writers_of_one_version_on_four_processes_one_wins(
    database: tuple[Path, str | None], backend: str, tmp_path: Path
) -> None:
    if backend != "postgresql":
        pytest.skip("several API processes share one database on PostgreSQL")
    with several_api_processes(database, tmp_path) as (base, token):
        auth = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=base, headers=auth) as c:
            case = ok(c.post("/cases", json={"title": "One version"}), 201)
            tag = c.get(f"/cases/{case['id']}").headers["etag"]
        responses = asyncio.run(_at_once(base, auth, case["id"], tag, n=20))
        statuses = Counter(r.status_code for r in responses)
        print(dict(statuses))  # shown with -s
        assert statuses == Counter({200: 1, 412: 19}), statuses
        winner = next(r for r in responses if r.status_code == 200).json()["data"]["title"]
        with httpx.Client(base_url=base, headers=auth) as c:
            assert ok(c.get(f"/cases/{case['id']}"))["title"] == winner


async def _at_once(base: str, auth: dict[str, str], case_id: str, tag: str, n: int) -> list[httpx.Response]:
    async with httpx.AsyncClient(
        base_url=base, headers=auth, timeout=30, limits=httpx.Limits(max_connections=n)
    ) as c:
        return list(
            await asyncio.gather(
                *(
                    c.patch(f"/cases/{case_id}", json={"title": f"Writer {i}"}, headers={"If-Match": tag})
                    for i in range(n)
                )
            )
        )
