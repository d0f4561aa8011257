"""Profile of one authenticated request, in process (no HTTP, no network between client and app):
statements, transactions, round trips and CPU per request, and where the CPU goes.

For `GET /cases/{id}` (an administrator's access token), `POST /cases` and `GET /cases` (a page
of 20), on SQLite and PostgreSQL. The app runs with its lifespan (the real runtime) behind httpx's
ASGI transport; the requests are sent one at a time.

- statements: what SQLAlchemy sends (`before_cursor_execute`), plus BEGIN/COMMIT/ROLLBACK counted
  from the engine's transaction events; on PostgreSQL every one is a round trip, and with
  `pool_pre_ping` each checkout adds three (BEGIN, `;`, ROLLBACK);
- thread hops (SQLite): calls aiosqlite hands to its connection threads (none since statements
  run on the event loop's thread, decision 0017; SQLiteWriteGate's BEGIN IMMEDIATE is counted in
  "transactions begun", not in statements);
- CPU: `time.process_time()` (every thread of the process) over the timed requests;
- layers: cumulative CPU of the main functions under cProfile (inflated by the profiler; read
  them as shares).

Run: `python bench/profile_request.py [--db sqlite|postgresql|both] [-n 400]`.
PostgreSQL: a database `hotpath_profile_<random>` on CASEFILE_BENCH_PG (default the local server),
created and dropped.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import secrets
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiosqlite
import asyncpg
import httpx
import smoke
from sqlalchemy import event

from casefile.app import create_app
from casefile.db import Database
from casefile.migrate import upgrade
from casefile.runtime import Runtime
from casefile.settings import Settings
from casefile.users.service import ensure_admin

PG = os.environ.get("CASEFILE_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
EMAIL, PASSWORD = "admin@bench.test", "Bench-Passw0rd-123"

# (label, substring of the profiled function's file:name) — the layers of a request.
LAYERS = [
    ("whole request (ASGI app)", "fastapi/applications.py:__call__"),
    ("middleware stack", "starlette/middleware/errors.py:__call__"),
    ("dependencies (solve_dependencies)", "fastapi/dependencies/utils.py:solve_dependencies"),
    ("endpoint function", "fastapi/routing.py:run_endpoint_function"),
    ("authentication (get_principal)", "auth/dependencies.py:get_principal"),
    ("  token decode", "auth/jwt_tokens.py:decode_access_token"),
    ("  rate limit (enforce)", "casefile/ratelimit.py:enforce"),
    ("case lookup (case_for)", "access/matter.py:case_for"),
    ("case create (service)", "cases/service.py:create_case"),
    ("audit of the read", "audit/service.py:record_read"),
    ("commit (db.finish)", "casefile/db.py:finish"),
    ("SQLAlchemy execute", "sqlalchemy/orm/session.py:execute"),
    ("response body (dump_for)", "access/visibility.py:dump_for"),
]


class Counts:
    def __init__(self) -> None:
        self.c: Counter[str] = Counter()
        self._hooked_sqlite = False

    def attach(self, db: Database) -> None:
        # On PostgreSQL the read engine is the write engine with autocommit: same pool, and events
        # listened on the parent are heard on the autocommit one too, so listen once, on it.
        engines = {id(e.sync_engine.pool): e for e in (db.read_engine, db.engine)}.values()
        for engine in engines:
            sync = engine.sync_engine
            event.listen(sync, "before_cursor_execute", self._stmt)
            event.listen(sync, "begin", self._transaction("begin"))
            event.listen(sync, "commit", self._transaction("commit"))
            event.listen(sync, "rollback", self._transaction("rollback"))
            event.listen(sync.pool, "checkout", lambda *_: self.c.update(["checkout"]))
        if self._hooked_sqlite:
            return
        self._hooked_sqlite = True
        original: Any = aiosqlite.Connection._execute

        async def counted(conn: Any, fn: Any, *args: Any, **kwargs: Any) -> Any:
            self.c["sqlite_hops"] += 1
            return await original(conn, fn, *args, **kwargs)

        # Counting hops by wrapping a private method: a benchmark's probe, never done in src/.
        setattr(aiosqlite.Connection, "_execute", counted)  # noqa: B010

    def _transaction(self, what: str) -> Any:
        def count(conn: Any) -> None:
            # An autocommit connection (reads) sends no BEGIN/COMMIT: SQLAlchemy's events still fire.
            self.c[what if not conn._is_autocommit_isolation() else f"{what} (autocommit, not sent)"] += 1

        return count

    def _stmt(self, _conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        self.c["statements"] += 1
        self.c["stmt:" + statement.split(maxsplit=1)[0].upper()] += 1


async def run(db_kind: str, n: int, profile: bool) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="hotpath-profile-"))
    pg_name = None
    url = None
    if db_kind == "postgresql":
        pg_name = f"hotpath_profile_{secrets.token_hex(4)}"
        conn = await asyncpg.connect(PG)
        await conn.execute(f'CREATE DATABASE "{pg_name}"')
        await conn.close()
        url = PG.rsplit("/", 1)[0] + "/" + pg_name
    try:
        settings = Settings(
            _env_file=None,
            data_dir=tmp,
            database_url=url,
            worker_enabled=False,
            ai_enabled=False,
            rate_limit_user="1000000/hour",
            rate_limit_admin="1000000/hour",
            rate_limit_login="1000000/minute",
        )
        await asyncio.to_thread(upgrade, settings)
        setup = Database(settings)
        async with setup.transaction() as session:
            await ensure_admin(session, email=EMAIL, password=PASSWORD)
        await setup.dispose()
        app = create_app(settings)
        async with app.router.lifespan_context(app):
            runtime: Runtime = app.state.runtime
            counts = Counts()
            counts.attach(runtime.db)
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://bench/api/v1") as client:
                r = await client.post("/auth/login", json={"email": EMAIL, "password": PASSWORD})
                token = r.json()["data"]["token"]
                client.headers["Authorization"] = f"Bearer {token}"

                def body() -> dict[str, Any]:
                    return {
                        "title": "Acme v. Widget",
                        "case_number": f"B-{secrets.token_hex(6)}",
                        "client_name": "Acme Corp",
                        "status": "active",
                        "priority": "high",
                    }

                r = await client.post("/cases", json=body())
                assert r.status_code == 201, r.text
                case_id = r.json()["data"]["id"]
                results: dict[str, Any] = {}
                requests: tuple[tuple[str, Callable[[], Awaitable[httpx.Response]]], ...] = (
                    # The framework's floor in the same run: no database, no authentication.
                    ("GET /healthz", lambda: client.get("http://bench/healthz")),
                    ("GET /cases/{id}", lambda: client.get(f"/cases/{case_id}")),
                    ("POST /cases", lambda: client.post("/cases", json=body())),
                    # After the creates: a first page of 20 of them, with its total.
                    ("GET /cases (list)", lambda: client.get("/cases", params={"limit": 20})),
                )
                for name, call in requests:
                    for _ in range(50):  # warm-up: caches, pool, compiled statements
                        r = await call()
                        assert r.status_code in (200, 201), r.text
                    counts.c.clear()
                    cpu0, wall0 = time.process_time(), time.perf_counter()
                    for _ in range(n):
                        await call()
                    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
                    per = {k: v / n for k, v in counts.c.items()}
                    layers: list[tuple[str, float]] = []
                    calls = float("nan")
                    if profile:
                        prof = cProfile.Profile(time.thread_time)  # the event loop's CPU, not waits
                        prof.enable()
                        for _ in range(n):
                            await call()
                        prof.disable()
                        stats = pstats.Stats(prof)
                        # Deterministic, unlike CPU time on a shared machine: Python calls made.
                        calls = stats.total_calls / n  # type: ignore[attr-defined]
                        if os.environ.get("PROFILE_DUMP"):  # a directory: one pstats file per request kind
                            slug = "".join(c if c.isalnum() else "_" for c in name).strip("_")
                            stats.dump_stats(Path(os.environ["PROFILE_DUMP"]) / f"{db_kind}_{slug}.pstats")
                        if os.environ.get("PROFILE_TOP"):
                            print(f"\n### {db_kind} {name}: top functions by own CPU")
                            stats.sort_stats("tottime").print_stats(int(os.environ["PROFILE_TOP"]))
                        for label, needle in LAYERS:
                            file_part, func = needle.rsplit(":", 1)
                            total = max(
                                (
                                    ct
                                    for (f, _line, fn), (_cc, _nc, _tt, ct, _callers) in stats.stats.items()  # type: ignore[attr-defined]
                                    if fn == func and f.endswith(file_part)
                                ),
                                default=0.0,
                            )
                            if total:
                                layers.append((label, total / n * 1000))
                    results[name] = {
                        "cpu_ms": cpu / n * 1000,
                        "wall_ms": wall / n * 1000,
                        "per": per,
                        "layers": layers,
                        "calls": calls,
                    }
            return results
    finally:
        if pg_name:
            conn = await asyncpg.connect(PG)
            await conn.execute(f'DROP DATABASE IF EXISTS "{pg_name}" WITH (FORCE)')
            await conn.close()


def report(db_kind: str, results: dict[str, Any]) -> None:
    for name, r in results.items():
        per = r["per"]
        stmts = per.get("statements", 0)
        tx = per.get("begin", 0)
        ends = per.get("commit", 0) + per.get("rollback", 0)
        print(f"\n## {db_kind}: {name}")
        print(f"CPU {r['cpu_ms']:.2f} ms/request, wall {r['wall_ms']:.2f} ms/request (one at a time)")
        print(f"Python function calls {r['calls']:.0f}/request (under cProfile; in-process client included)")
        kinds = ", ".join(f"{k[5:]} {v:.1f}" for k, v in sorted(per.items()) if k.startswith("stmt:"))
        print(
            f"statements {stmts:.1f} ({kinds}); transactions begun {tx:.1f}, ended {ends:.1f}; "
            f"pool checkouts {per.get('checkout', 0):.1f}"
        )
        autocommit = per.get("begin (autocommit, not sent)", 0)
        print(f"autocommit (read) units: {autocommit:.1f}")
        if db_kind == "sqlite":
            print(f"aiosqlite thread hops {per.get('sqlite_hops', 0):.1f}")
        else:  # every statement, BEGIN and COMMIT/ROLLBACK sent is a round trip
            # A read's audit entry is appended by the process's ReadAppender on an engine of its
            # own, not counted here: BEGIN, SELECT head FOR UPDATE, INSERT, UPDATE, COMMIT (5 round
            # trips) per batch, shared by the reads that arrive while the previous batch commits.
            print(f"round trips {stmts + tx + ends:.1f} (the request's own)")
        for label, ms in r["layers"]:
            print(f"  {label:40s} {ms:6.2f} ms main-thread CPU under cProfile")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", default="both", choices=["sqlite", "postgresql", "both"])
    parser.add_argument("-n", type=int, default=400)
    parser.add_argument("--no-profile", action="store_true")
    args = smoke.parse_args(parser, db="sqlite", n=5, no_profile=True)
    kinds = ["sqlite", "postgresql"] if args.db == "both" else [args.db]
    for kind in kinds:
        report(kind, asyncio.run(run(kind, args.n, not args.no_profile)))


if __name__ == "__main__":
    main()
