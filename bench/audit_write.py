"""The cost of the audit trail per request: one entry, timed on SQLite and PostgreSQL.

Two measurements per database, each over `--writes` entries (after a warm-up of 20), one at a
time, on a fresh migrated database:

* `apart`: `audit.service.record_apart`, a short write transaction of its own holding just the
  entry: what a refused request (404/403 on a case) pays on both databases, and what a read
  (`case.read`, `document.download`, `search.query`) pays on SQLite, whose reads cannot write.
* `in_tx`: the extra cost inside a transaction that writes anyway: every change on both
  databases, and every read on PostgreSQL (recorded in the request's own transaction there). A
  transaction that updates one row (the system-configuration row, standing in for any change) is
  timed without and with one `record(...)`; the difference of the medians is what the entry adds
  (the head's lock, one INSERT, one UPDATE of the head, the SHA-256).

Run from the project root:
    python bench/audit_write.py [--writes 300] [--postgres postgresql://postgres@127.0.0.1:5432/postgres]
        [--no-postgres] [--smoke]
PostgreSQL is skipped if it does not answer. Prints a table of p50 / p95 in milliseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import statistics
import tempfile
import time
from pathlib import Path

import asyncpg
import smoke
from sqlalchemy import text
from sqlalchemy.engine import make_url

from casefile.audit.service import record, record_apart
from casefile.db import Database
from casefile.migrate import upgrade
from casefile.request_context import RequestContext, request_context
from casefile.settings import Settings

WARMUP = 20


def _ms(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered) * 1000, ordered[int(len(ordered) * 0.95) - 1] * 1000


async def _measure(settings: Settings, writes: int) -> dict[str, tuple[float, float]]:
    db = Database(settings)
    context = RequestContext(request_id="req_bench", ip="127.0.0.1", user_agent="bench/1")
    context.identify("user", "user_bench", "user_bench")
    results: dict[str, tuple[float, float]] = {}
    try:
        with request_context(context):
            apart: list[float] = []
            for n in range(WARMUP + writes):
                started = time.perf_counter()
                await record_apart(
                    db, "case.read", resource_type="case", resource_id=f"case_{n}", case_id=f"case_{n}"
                )
                if n >= WARMUP:
                    apart.append(time.perf_counter() - started)
            results["apart"] = _ms(apart)

            async def change(audited: bool, n: int) -> float:
                started = time.perf_counter()
                async with db.transaction(write=True) as session:
                    await session.execute(
                        text("UPDATE system_config SET updated_by = :n"), {"n": f"bench{n}"}
                    )
                    if audited:
                        record(session, "config.updated", resource_type="config", details={"n": n})
                return time.perf_counter() - started

            plain, audited = [], []
            for n in range(WARMUP + writes):  # interleaved, so drift affects both alike
                p, a = await change(False, n), await change(True, n)
                if n >= WARMUP:
                    plain.append(p)
                    audited.append(a)
            results["change"] = _ms(plain)
            results["change+entry"] = _ms(audited)
            p50 = results["change+entry"][0] - results["change"][0]
            p95 = results["change+entry"][1] - results["change"][1]
            results["in_tx (difference)"] = (p50, p95)
    finally:
        await db.dispose()
    return results


async def _pg_admin(url: str, sql: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


def run(name: str, settings: Settings, writes: int) -> None:
    upgrade(settings)
    results = asyncio.run(_measure(settings, writes))
    for kind, (p50, p95) in results.items():
        print(f"| {name} | {kind} | {p50:.2f} | {p95:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--writes", type=int, default=300)
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--no-postgres", action="store_true", help="SQLite only")
    args = smoke.parse_args(parser, writes=3, no_postgres=True)
    print("| database | what | p50 ms | p95 ms |\n|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        run("SQLite", Settings(_env_file=None, data_dir=Path(tmp) / "sqlite"), args.writes)
        if args.no_postgres:
            return
        name = f"casefile_bench_{secrets.token_hex(4)}"
        try:
            asyncio.run(_pg_admin(args.postgres, f'CREATE DATABASE "{name}"'))
        except (OSError, asyncpg.PostgresError) as exc:
            print(f"PostgreSQL skipped: {exc}")
            return
        try:
            url = make_url(args.postgres).set(database=name).render_as_string(hide_password=False)
            run(
                "PostgreSQL",
                Settings(_env_file=None, data_dir=Path(tmp) / "pg", database_url=url),
                args.writes,
            )
        finally:
            asyncio.run(_pg_admin(args.postgres, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


if __name__ == "__main__":
    main()
