"""Before/after on a shared machine: the `search_cases.py` kinds against two servers at once, one
running the code at `--before` (a source directory, e.g. another checkout's `src`) and one this
checkout's, on the same loaded database, with their requests interleaved (A, B, A, B, ...) so that
whatever else the machine is doing weighs on both alike. Needs a database `search_cases.py` loaded.

    python bench/search_cases_ab.py --before /path/to/other/checkout/src --database-url ...
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import smoke

sys.path.insert(0, str(Path(__file__).resolve().parent))
import search_cases as sc

ROOT = Path(__file__).resolve().parent.parent


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--before", help="source directory of the code to compare with (required)")
    parser.add_argument("--database-url", default=sc.DEFAULT_URL)
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--kinds", default="")
    parser.add_argument("--deep-page", type=int, default=sc.DEEP_PAGE, help="the page of the deep kinds")
    parser.add_argument("--deadline-minutes", type=float, default=20.0)
    # The smoke run compares this tree with itself, on the database search_cases.py --smoke loaded.
    args = smoke.parse_args(
        parser,
        before=str(ROOT / "src"),
        database_url=sc.SMOKE_URL,
        requests=1,
        warmup=0,
        deep_page=3,
        deadline_minutes=3.0,
    )
    if args.before is None:
        parser.error("--before is required")
    target = sc.Target.parse(args.database_url)
    deadline = sc.Deadline(args.deadline_minutes * 60)
    deadline.arm()
    after_src = str(ROOT / "src")
    case_numbers = __import__("asyncio").run(
        sc.sample_case_numbers(target, args.requests + args.warmup, deadline)
    )
    kinds = sc.build_kinds(case_numbers, random.Random(20261122), args.deep_page)
    if args.kinds:
        by_name = {k.name: k for k in kinds}
        kinds = [by_name[n] for n in args.kinds.split(",")]
    results = []
    with tempfile.TemporaryDirectory(prefix="casefile-ab-") as tmp, ExitStack() as stack:
        data_dir = Path(tmp)
        servers = {}
        for label, src in (("before", args.before), ("after", after_src)):
            os.environ["PYTHONPATH"] = src
            servers[label] = stack.enter_context(sc.running_server(target, data_dir, deadline))
        os.environ.pop("PYTHONPATH")
        last = servers["after"]  # the admin (and its password) the last server made
        clients = {}
        for label, server in servers.items():
            client = stack.enter_context(httpx.Client(base_url=server.base_url, trust_env=False, timeout=60))
            response = client.post(
                f"{sc.API}/auth/login", json={"email": last.email, "password": last.password}
            )
            response.raise_for_status()
            client.headers["Authorization"] = f"Bearer {response.json()['data']['token']}"
            clients[label] = client
        # The cursor kinds need the "after" server (cursors are new); "before" gets the OFFSET page.
        resolved = sc.resolve_cursors(clients["after"], kinds, deadline)
        for kind, plain in zip(resolved, kinds, strict=True):
            per: dict[str, list[float]] = {"before": [], "after": []}
            totals: dict[str, list[int]] = {"before": [], "after": []}
            pool = kind.params
            for i in range(args.warmup + args.requests):
                for label in ("before", "after") if i % 2 else ("after", "before"):
                    params = pool[i % len(pool)]
                    if label == "before" and "cursor" in params:
                        params = {k: v for k, v in params.items() if k != "cursor"} | {
                            "page": str(args.deep_page)
                        }
                    elapsed, total = sc.get_cases(clients[label], params, deadline)
                    if i >= args.warmup:
                        per[label].append(elapsed)
                        totals[label].append(total)
            row: dict[str, Any] = {"kind": kind.name, "example": sc.describe(plain.params[0])}
            for label in ("before", "after"):
                row[f"{label}_p50"] = round(statistics.median(per[label]), 1)
                row[f"{label}_p95"] = round(percentile(per[label], 0.95), 1)
                row[f"{label}_total_median"] = statistics.median(totals[label])
            results.append(row)
            sc.log(json.dumps(row))
    header = f"{'kind':<14} {'before p50':>10} {'p95':>8} {'after p50':>10} {'p95':>8}"
    print(f"\n{header}  total before/after (median)")
    for r in results:
        print(
            f"{r['kind']:<14} {r['before_p50']:>10} {r['before_p95']:>8} "
            f"{r['after_p50']:>10} {r['after_p95']:>8}"
            f"  {r['before_total_median']:,.0f} / {r['after_total_median']:,.0f}"
        )
    sc.Deadline.disarm()
    return 0


if __name__ == "__main__":
    sys.exit(main())
