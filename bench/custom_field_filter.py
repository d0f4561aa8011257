"""Filtering cases on a custom field (issue 27, item 4): `GET /api/v1/cases?cf.<name>=…` over
100,000 cases on PostgreSQL, p95 < 50 ms (docs/research/bench-notes-2026-11.md, "Custom-field filters").

1. creates a database (default `casefile_bench_cf`; `--reuse` keeps a loaded one, `--recreate`
   drops it) and migrates it with `casefile migrate`;
2. defines four case fields (a single choice of 8, a text of 500 values, a decimal, a date) and
   loads N cases (default 100,000) with a value of each, in server-side SQL (`generate_series`):
   the case's `custom_fields` JSON and the typed rows of `custom_field_values` (with the case's
   created_at, as the service writes them); `VACUUM ANALYZE`;
3. starts `casefile serve` on a loopback port of 18400-18499 and logs in as an administrator;
4. times `GET /api/v1/cases` one request at a time per kind of filter, end to end over HTTP, and
   prints `EXPLAIN ANALYZE` of a filter's matches (1 in 8 cases), so the index that answers is visible.

`--smoke` runs the whole path on 2,000 cases and 5 requests a kind (CI: it only has to work).
Reuses the server, database and timing helpers of `search_cases.py`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

import httpx
import search_cases as common
from search_cases import API, BenchError, Deadline, Target, log, percentile

TARGET_MS = 50.0
CHOICES = ("pleading", "discovery", "mediation", "trial", "appeal", "settled", "stayed", "remanded")
COURTS = 500
FIELDS = {
    # name: (type, choices)
    "bench_stage": ("single_choice", list(CHOICES)),
    "bench_court": ("text", []),
    "bench_amount": ("decimal", []),
    "bench_filed": ("date", []),
}


def seed_sql() -> list[str]:
    """Cases `bench_<n>` with a value of each field; n-th case's values are a function of n."""
    stage = f"(ARRAY{list(CHOICES)!r})[(1 + (i * 7919) % {len(CHOICES)})::int]"
    court = f"'court ' || ((i * 104729) % {COURTS})"
    amount = "round(((i * 15485863) % 1000000) / 100.0, 2)"
    filed = "(date '2020-01-01' + ((i * 31) % 2000)::int)"
    return [
        f"""
        INSERT INTO cases (id, title, case_number, status, access, priority, created_at, updated_at,
                           custom_fields)
        SELECT 'case_bench_' || lpad(i::text, 9, '0'), 'Bench matter ' || i, 'BENCH-' || i,
               (ARRAY['active','pending','closed'])[(1 + i % 3)::int], 'firm', 'medium',
               now() - i * interval '1 minute', now() - i * interval '1 minute',
               json_build_object('bench_stage', {stage}, 'bench_court', {court},
                                 'bench_amount', ({amount})::text, 'bench_filed', ({filed})::text)
        FROM generate_series(1, $1::bigint) AS i
        """,
        *(
            f"""
            INSERT INTO custom_field_values (field_id, case_id, value_text, value_number, case_created_at)
            SELECT 'cf_{name}', cases.id, {text}, {number}, cases.created_at
            FROM generate_series(1, $1::bigint) AS i
            JOIN cases ON cases.id = 'case_bench_' || lpad(i::text, 9, '0')
            """
            for name, text, number in (
                ("bench_stage", stage, "NULL"),
                ("bench_court", court, "NULL"),
                ("bench_amount", "NULL", amount),
                ("bench_filed", f"({filed})::text", "NULL"),
            )
        ),
    ]


async def load(target: Target, rows: int, deadline: Deadline) -> None:
    conn = await common.connect(target.url, deadline)
    try:
        if await conn.fetchval("SELECT count(*) FROM cases WHERE id LIKE 'case_bench_%'") == rows:
            log(f"{rows:,} bench cases are there already")
            return
        await conn.execute("DELETE FROM cases WHERE id LIKE 'case_bench_%'")
        await conn.execute("DELETE FROM custom_fields WHERE id LIKE 'cf_bench_%'")
        for position, (name, (kind, choices)) in enumerate(FIELDS.items()):
            await conn.execute(
                """INSERT INTO custom_fields (id, entity, name, label, field_type, required,
                       required_for_statuses, "default", choices, position, created_at, updated_at)
                   VALUES ($1, 'case', $2, $2, $3, false, '[]', NULL, $4, $5, now(), now())""",
                f"cf_{name}",
                name,
                kind,
                json.dumps(choices),
                position,
            )
        started = time.monotonic()
        for statement in seed_sql():
            await conn.execute(statement, rows)
        log(f"loaded {rows:,} cases and {rows * len(FIELDS):,} values in {time.monotonic() - started:.0f} s")
        await conn.execute("VACUUM ANALYZE cases")
        await conn.execute("VACUUM ANALYZE custom_field_values")
    finally:
        await conn.close()


def kinds(rows: int) -> dict[str, list[dict[str, str]]]:
    return {
        # The same list without a custom-field filter: what the rest of a request costs.
        "no_filter": [{}],
        "choice_1_in_8": [{"cf.bench_stage": c} for c in CHOICES],
        "text_1_in_500": [{"cf.bench_court": f"Court {n}"} for n in range(0, COURTS, 37)],
        "decimal_range_1pct": [{"cf.bench_amount": f"{lo}..{lo + 100}"} for lo in range(0, 10000, 700)],
        "date_range_1_month": [{"cf.bench_filed": f"2022-0{m}-01..2022-0{m}-28"} for m in range(1, 10)],
        "choice_and_status": [{"cf.bench_stage": c, "status": "closed"} for c in CHOICES],
        "two_fields": [{"cf.bench_stage": c, "cf.bench_court": "Court 7,Court 8"} for c in CHOICES],
    }


def time_kinds(client: httpx.Client, per_kind: int, rows: int) -> dict[str, dict[str, float]]:
    results: dict[str, dict[str, float]] = {}
    for kind, variants in kinds(rows).items():
        # One untimed request per variant warms the server's caches and the buffer pool.
        for params in variants:
            client.get(f"{API}/cases", params=params).raise_for_status()
        timings: list[float] = []
        totals: list[int] = []
        for i in range(per_kind):
            params = variants[i % len(variants)]
            started = time.perf_counter()
            response = client.get(f"{API}/cases", params=params)
            timings.append((time.perf_counter() - started) * 1000)
            if response.status_code != 200:
                raise BenchError(f"{kind} {params}: {response.status_code} {response.text[:300]}")
            totals.append(response.json()["meta"]["pagination"]["total"])
        timings.sort()
        results[kind] = {
            "p50_ms": round(percentile(timings, 50), 1),
            "p95_ms": round(percentile(timings, 95), 1),
            "max_ms": round(timings[-1], 1),
            "median_total": sorted(totals)[len(totals) // 2],
        }
        log(
            f"{kind:20} p50 {results[kind]['p50_ms']:6.1f} ms  p95 {results[kind]['p95_ms']:6.1f} ms  "
            f"(median total {results[kind]['median_total']:,})"
        )
    return results


async def explain(target: Target, deadline: Deadline) -> str:
    conn = await common.connect(target.url, deadline)
    try:
        # The shape of the matches the list reads for a filter in its default order (migration
        # 0026, listing.Narrowed): ids and sort keys from the value index, trashed cases left out.
        rows = await conn.fetch(
            """EXPLAIN (ANALYZE, BUFFERS, COSTS OFF)
               SELECT id, count(*) OVER () FROM (
                   SELECT v.case_id AS id, v.case_created_at AS key FROM custom_field_values v
                   WHERE v.field_id = 'cf_bench_stage' AND v.value_text = 'pleading'
                     AND NOT EXISTS (SELECT 1 FROM cases c
                                     WHERE c.id = v.case_id AND c.deleted_at IS NOT NULL)
                   LIMIT 10001) AS matched
               ORDER BY key DESC, id DESC LIMIT 21"""
        )
        return "\n".join(r[0] for r in rows)
    finally:
        await conn.close()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--database-url", default="postgresql://postgres@127.0.0.1/casefile_bench_cf")
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=200, help="timed requests per kind")
    parser.add_argument("--smoke", action="store_true", help="2,000 cases, 5 requests a kind")
    parser.add_argument("--reuse", action="store_true")
    parser.add_argument("--recreate", action="store_true")
    parser.add_argument("--port", type=int, default=18410, help="loopback port (the task's range)")
    parser.add_argument("--deadline-minutes", type=float, default=30)
    args = parser.parse_args()
    if args.smoke:
        # A database of its own, made afresh: a loaded one may carry an older schema.
        args.rows, args.requests, args.recreate = 2_000, 5, True
        args.database_url = args.database_url.replace("casefile_bench_cf", "casefile_bench_cf_smoke")
    target = Target.parse(args.database_url)
    deadline = Deadline(args.deadline_minutes * 60)
    deadline.arm()
    common.free_port = lambda: args.port  # the port range this run may use
    try:
        with tempfile.TemporaryDirectory(prefix="casefile-bench-cf-") as tmp:
            data_dir = Path(tmp)
            asyncio.run(
                common.prepare_database(target, reuse=args.reuse, recreate=args.recreate, deadline=deadline)
            )
            common.run_migrations(target, data_dir, deadline)
            asyncio.run(load(target, args.rows, deadline))
            with (
                common.running_server(target, data_dir, deadline) as server,
                httpx.Client(base_url=server.base_url, trust_env=False, timeout=30) as client,
            ):
                client.headers["Authorization"] = f"Bearer {common.login(client, server)}"
                results = time_kinds(client, args.requests, args.rows)
            plan = asyncio.run(explain(target, deadline))
    finally:
        deadline.disarm()
    print(plan)
    worst = max(r["p95_ms"] for r in results.values())
    verdict = "PASS" if worst < TARGET_MS else "FAIL"
    print(json.dumps({"rows": args.rows, "requests_per_kind": args.requests, "results": results}, indent=2))
    print(f"{verdict}: worst p95 {worst:.1f} ms (target < {TARGET_MS:.0f} ms) on {args.rows:,} cases")
    return 0 if args.smoke or verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
