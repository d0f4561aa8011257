"""The cost of the matter-access check on a case list page of 20, on SQLite and PostgreSQL.

In process, no HTTP: the same `casefile.listing.fetch_page(CASE_LIST, …)` the API runs (the count
and the page query, plus the assignees' `selectin` load), once with the access condition
(`cases.access.visible_to`) and once without, alternating, for three callers:

- an administrator (the condition is only "no wall on me");
- an attorney in 3 groups (walls, assignments and grants are all looked up);
- an API key limited to 50 cases.

Data: N cases (default 20,000), a third of them `restricted` with a group grant and a user grant,
1 in 20 with a wall; 200 users in 20 groups; 2 assignees per case.

Run: `.venv/bin/python bench/access_check.py [--cases 20000] [--rounds 300] [--pg-url URL]
[--no-postgres] [--smoke]`.
Without `--pg-url` it uses `postgresql+asyncpg://postgres@127.0.0.1/casefile_bench_access`
(created and dropped) when PostgreSQL is reachable. Prints a table and nothing else.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
import smoke
from sqlalchemy import insert

from casefile.access.matter import visible_to
from casefile.auth.permissions import ROLE_PERMISSIONS, Principal
from casefile.cases.repository import CASE_LIST
from casefile.db import Database
from casefile.listing import ListQuery, fetch_page
from casefile.migrate import upgrade
from casefile.models import Case, CaseAssignee, CaseGrant, CaseWall, Group, GroupMember, User
from casefile.settings import Settings


async def seed(db: Database, cases: int) -> tuple[list[str], list[str]]:
    rng = random.Random(7)
    now = datetime(2026, 1, 1, tzinfo=UTC)
    users = [f"user_bench{i:05d}" for i in range(200)]
    groups = [f"grp_bench{i:03d}" for i in range(20)]
    case_ids = [f"case_bench{i:07d}" for i in range(cases)]
    async with db.transaction() as session:
        await session.execute(
            insert(User),
            [
                {
                    "id": u,
                    "email": f"{u}@bench.test",
                    "name": u,
                    "role": "attorney",
                    "active": True,
                    "created_at": now,
                    "updated_at": now,
                }
                for u in users
            ],
        )
        await session.execute(
            insert(Group), [{"id": g, "name": g, "created_at": now, "updated_at": now} for g in groups]
        )
        await session.execute(
            insert(GroupMember),
            [{"group_id": groups[i % 20], "user_id": u} for i, u in enumerate(users)]
            + [{"group_id": groups[(i + 7) % 20], "user_id": u} for i, u in enumerate(users)]
            + [{"group_id": groups[(i + 13) % 20], "user_id": u} for i, u in enumerate(users)],
        )
        for start in range(0, cases, 5000):
            chunk = case_ids[start : start + 5000]
            await session.execute(
                insert(Case),
                [
                    {
                        "id": c,
                        "title": f"Matter {c}",
                        "case_number": c,
                        "status": "active",
                        "priority": "medium",
                        "access": "restricted" if i % 3 == 0 else "firm",
                        "created_at": now + timedelta(seconds=start + i),
                        "updated_at": now,
                    }
                    for i, c in enumerate(chunk)
                ],
            )
            await session.execute(
                insert(CaseAssignee),
                [
                    {"case_id": c, "user_id": u, "assigned_at": now}
                    for c in chunk
                    for u in rng.sample(users, 2)
                ],
            )
            restricted = [c for i, c in enumerate(chunk) if i % 3 == 0]
            await session.execute(
                insert(CaseGrant),
                [
                    {
                        "case_id": c,
                        "subject_type": "group",
                        "subject_id": rng.choice(groups),
                        "level": "read",
                        "granted_at": now,
                    }
                    for c in restricted
                ]
                + [
                    {
                        "case_id": c,
                        "subject_type": "user",
                        "subject_id": rng.choice(users),
                        "level": "write",
                        "granted_at": now,
                    }
                    for c in restricted
                ],
            )
            await session.execute(
                insert(CaseWall),
                [
                    {"case_id": c, "subject_type": "user", "subject_id": rng.choice(users), "created_at": now}
                    for i, c in enumerate(chunk)
                    if i % 20 == 0
                ],
            )
    return users, case_ids


async def time_lists(db: Database, principal: Principal, rounds: int) -> tuple[float, float, int]:
    query = ListQuery(
        page=1, limit=20, sort="created_at", order="desc", search_words=None, fields=None, filters={}
    )
    with_check: list[float] = []
    without: list[float] = []
    total = 0
    for i in range(rounds + 20):
        for checked in (True, False) if i % 2 else (False, True):
            async with db.transaction(write=False) as session:
                started = time.perf_counter()
                page = await fetch_page(
                    session, CASE_LIST, query, conditions=[visible_to(principal)] if checked else []
                )
                elapsed = (time.perf_counter() - started) * 1000
            if i >= 20:  # warm-up rounds are not counted
                (with_check if checked else without).append(elapsed)
            if checked:
                total = page.total
    return statistics.median(with_check), statistics.median(without), total


async def run(url: str | None, label: str, cases: int, rounds: int) -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="casefile-access-bench-"))
    settings = Settings(data_dir=data_dir, database_url=url)
    await asyncio.to_thread(upgrade, settings)
    db = Database(settings)
    try:
        users, case_ids = await seed(db, cases)
        callers = {
            "administrator": Principal(
                kind="user", id="user_admin", permissions=ROLE_PERMISSIONS["admin"], role="admin"
            ),
            "attorney in 3 groups": Principal(
                kind="user", id=users[5], permissions=ROLE_PERMISSIONS["attorney"], role="attorney"
            ),
            "key limited to 50 cases": Principal(
                kind="api_key",
                id="key_bench",
                permissions=ROLE_PERMISSIONS["attorney"],
                key_creator_id=users[5],
                key_creator_role="attorney",
                key_case_ids=frozenset(case_ids[-50:]),
            ),
        }
        for name, principal in callers.items():
            checked, unchecked, total = await time_lists(db, principal, rounds)
            cost = checked - unchecked
            print(f"| {label} | {name} | {total} | {unchecked:.2f} | {checked:.2f} | {cost:+.2f} |")
    finally:
        await db.dispose()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--pg-url", default=None)
    parser.add_argument("--no-postgres", action="store_true", help="SQLite only")
    args = smoke.parse_args(parser, cases=60, rounds=2, no_postgres=True)
    print(f"case list, page of 20 of {args.cases} cases, median of {args.rounds} rounds (ms)\n")
    print("| database | caller | visible total | without check | with check | cost |")
    print("|---|---|---|---|---|---|")
    await run(None, "SQLite", args.cases, args.rounds)
    if args.no_postgres:
        return
    pg_url = args.pg_url
    created = False
    if pg_url is None:
        try:
            conn = await asyncpg.connect("postgresql://postgres@127.0.0.1/postgres")
        except OSError:
            return
        await conn.execute("DROP DATABASE IF EXISTS casefile_bench_access")
        await conn.execute("CREATE DATABASE casefile_bench_access")
        await conn.close()
        pg_url, created = "postgresql+asyncpg://postgres@127.0.0.1/casefile_bench_access", True
    try:
        await run(pg_url, "PostgreSQL", args.cases, args.rounds)
    finally:
        if created:
            conn = await asyncpg.connect("postgresql://postgres@127.0.0.1/postgres")
            await conn.execute("DROP DATABASE IF EXISTS casefile_bench_access")
            await conn.close()


if __name__ == "__main__":
    asyncio.run(main())
