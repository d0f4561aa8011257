"""Issue 33: does any request wait for another's audit entry? Two source trees, same run, PostgreSQL.

For each source tree ("before": a checkout given with `--before`, e.g. the commit before the
verifiable log; "after": this checkout), on a fresh PostgreSQL database each: `casefile serve
--workers 2 --no-worker` plus one `casefile worker` (the sequencer runs there after the change),
then two loads one after the other, each `--seconds` long after a one-second warm-up:

- create: `POST /cases` (a case and its client party: two audit entries in the request's
  transaction);
- read: `GET /cases/{id}` (one audit entry, group-committed by each process).

During each load a sampler reads `pg_stat_activity` joined to the ungranted `pg_locks` every
`--sample-ms`: a backend waiting on a lock (`wait_event_type = 'Lock'`) whose statement or awaited
relation is an audit table counts as an audit wait. Also measured: requests per second, p50 and p99
latency, the server processes' CPU per request (/proc, the two API processes, not the worker), and
after the change the sequencing latency: from the moment a request's answer arrived (its entry was
committed before) to the first moment a signed tree head covered the entry (the newest head's size
is polled every 20 ms), for every request whose `X-Request-ID` was kept (one in five).

Run from the project root (2 cores here: the load client, both servers, the worker and PostgreSQL
share them; compare figures of one run):
    git archive <before-commit> src | tar -x -C /tmp/audit-before
    python bench/audit_contention.py --before /tmp/audit-before/src [--seconds 8] [--connections 32]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import smoke

sys.path.insert(0, str(Path(__file__).parent))
from http_load import cpu_seconds, free_port, wait_ready

PG = os.environ.get("CASEFILE_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
EMAIL, PASSWORD = "admin@bench.test", "Bench-Passw0rd-123"
HERE = Path(__file__).resolve().parent.parent
SAMPLE = """
SELECT a.wait_event_type, a.wait_event, a.state, left(a.query, 300) AS query,
       (SELECT string_agg(coalesce(l.relation::regclass::text, l.locktype), ',')
          FROM pg_locks l WHERE l.pid = a.pid AND NOT l.granted) AS awaited
FROM pg_stat_activity a
WHERE a.datname = current_database() AND a.pid <> pg_backend_pid() AND a.backend_type = 'client backend'
"""


@dataclass
class Samples:
    count: int = 0
    with_audit_wait: int = 0
    audit_waiting: int = 0
    lock_waiting: int = 0
    events: Counter[str] = field(default_factory=Counter)
    examples: Counter[str] = field(default_factory=Counter)


async def sample(dsn: str, every: float, stop: asyncio.Event, into: Samples) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        while not stop.is_set():
            rows = await conn.fetch(SAMPLE)
            audit = 0
            for row in rows:
                event = f"{row['wait_event_type']}:{row['wait_event']}" if row["wait_event_type"] else "cpu"
                if row["state"] == "active":
                    into.events[event] += 1
                if row["wait_event_type"] == "Lock":
                    into.lock_waiting += 1
                    text = f"{row['query'] or ''} {row['awaited'] or ''}"
                    if "audit_" in text:
                        audit += 1
                        into.examples[(row["query"] or "")[:80]] += 1
            into.count += 1
            into.audit_waiting += audit
            into.with_audit_wait += bool(audit)
            await asyncio.sleep(every)
    finally:
        await conn.close()


async def poll_heads(dsn: str, stop: asyncio.Event, seen: list[tuple[float, int]]) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        while not stop.is_set():
            with contextlib.suppress(asyncpg.UndefinedTableError):
                size = await conn.fetchval("SELECT coalesce(max(tree_size), 0) FROM audit_tree_heads")
                seen.append((time.time(), int(size)))
            await asyncio.sleep(0.02)
    finally:
        await conn.close()


async def one_connection(
    port: int, make: Any, until: float, warm: float, out: dict[str, Any], keep_every: int
) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    n = 0
    try:
        while time.perf_counter() < until:
            start = time.perf_counter()
            writer.write(make())
            status = int((await reader.readline()).split()[1])
            length, request_id = 0, None
            while True:
                line = await reader.readline()
                if line in (b"\r\n", b""):
                    break
                lower = line.lower()
                if lower.startswith(b"content-length:"):
                    length = int(line[15:])
                elif lower.startswith(b"x-request-id:"):
                    request_id = line[13:].strip().decode()
            await reader.readexactly(length)
            end = time.perf_counter()
            if start >= warm:
                out["latencies"].append(end - start)
                out["bad"] += status >= 400
                n += 1
                if request_id and n % keep_every == 0:
                    out["kept"].append((request_id, time.time()))
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


async def drive(
    port: int, api_pids: list[int], dsn: str, make: Any, args: argparse.Namespace
) -> dict[str, Any]:
    out: dict[str, Any] = {"latencies": [], "bad": 0, "kept": []}
    now = time.perf_counter()
    warm, until = now + 1.0, now + 1.0 + args.seconds
    stop = asyncio.Event()
    samples = Samples()
    heads: list[Any] = []
    clients = [
        asyncio.create_task(one_connection(port, make, until, warm, out, 5)) for _ in range(args.connections)
    ]
    await asyncio.sleep(1.0)
    cpu0 = sum(cpu_seconds(pid) for pid in api_pids)
    watchers = [
        asyncio.create_task(sample(dsn, args.sample_ms / 1000, stop, samples)),
        asyncio.create_task(poll_heads(dsn, stop, heads)),
    ]
    await asyncio.gather(*clients)
    cpu = sum(cpu_seconds(pid) for pid in api_pids) - cpu0
    await asyncio.sleep(2.0)  # the sequencer places what the load left
    stop.set()
    await asyncio.gather(*watchers)
    done = len(out["latencies"])
    lat = sorted(out["latencies"])
    return {
        "rps": done / args.seconds,
        "p50": statistics.median(lat) * 1000,
        "p99": lat[int(len(lat) * 0.99) - 1] * 1000,
        "cpu_ms": cpu / done * 1000,
        "errors": out["bad"],
        "samples": samples,
        "kept": out["kept"],
        "heads": heads,
    }


async def sequencing_latency(
    dsn: str, kept: list[tuple[str, float]], heads: list[tuple[float, int]]
) -> list[float]:
    """Seconds from each kept answer to the first poll that saw a head covering its entries."""
    conn = await asyncpg.connect(dsn)
    try:
        exists = await conn.fetchval("SELECT to_regclass('audit_tree_heads') IS NOT NULL")
        if not exists:
            return []
        rows = await conn.fetch(
            "SELECT request_id, max(seq) AS seq FROM audit_entries "
            "WHERE request_id = ANY($1) GROUP BY request_id",
            [request_id for request_id, _ in kept],
        )
    finally:
        await conn.close()
    placed = {row["request_id"]: row["seq"] for row in rows}
    latencies = []
    for request_id, answered in kept:
        seq = placed.get(request_id)
        if seq is None:
            continue
        seen = next((at for at, size in heads if size >= seq and at >= answered - 1), None)
        if seen is not None:
            latencies.append(max(0.0, seen - answered))
    return latencies


async def sequencer_started(dsn: str, timeout: float = 180) -> None:
    """After the change: until the worker's sequencer has signed its first head (its start, with
    the imports of every worker, takes a while on a busy machine). Before: nothing to wait for."""
    conn = await asyncpg.connect(dsn)
    try:
        if not await conn.fetchval("SELECT to_regclass('audit_tree_heads') IS NOT NULL"):
            return
        deadline = time.monotonic() + timeout
        while not await conn.fetchval("SELECT count(*) FROM audit_tree_heads"):
            if time.monotonic() > deadline:
                raise RuntimeError("the sequencer did not start")
            await asyncio.sleep(0.2)
    finally:
        await conn.close()


@contextlib.contextmanager
def database() -> Iterator[str]:
    name = f"audit_contention_{secrets.token_hex(4)}"

    async def admin(sql: str) -> None:
        conn = await asyncpg.connect(PG)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    asyncio.run(admin(f'CREATE DATABASE "{name}"'))
    try:
        yield PG.rsplit("/", 1)[0] + "/" + name
    finally:
        asyncio.run(admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) == pid:
                    found.append(int(entry))
    return found


def run_variant(name: str, src: Path, args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    results = {}
    for load in args.loads.split(","):
        with database() as url, tempfile.TemporaryDirectory() as tmp:
            env = {
                **os.environ,
                "PYTHONPATH": str(src),
                "CASEFILE_DATA_DIR": str(Path(tmp) / "data"),
                "CASEFILE_DATABASE_URL": url,
                "CASEFILE_ADMIN_EMAIL": EMAIL,
                "CASEFILE_ADMIN_PASSWORD": PASSWORD,
                "CASEFILE_RATE_LIMIT_USER": "100000000/hour",
                "CASEFILE_RATE_LIMIT_ADMIN": "100000000/hour",
                "CASEFILE_RATE_LIMIT_LOGIN": "100000000/minute",
                "CASEFILE_AI_ENABLED": "false",
                "CASEFILE_LOG_LEVEL": "WARNING",
            }
            port = free_port()
            cli = [sys.executable, "-c", "from casefile.cli import main; main()"]
            serve = subprocess.Popen(
                [*cli, "serve", "--port", str(port), "--workers", "2", "--no-worker"],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            worker = None
            try:
                wait_ready(f"http://127.0.0.1:{port}/healthz", serve, timeout=300)
                worker = subprocess.Popen(
                    [*cli, "worker"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
                )
                api = httpx.Client(base_url=f"http://127.0.0.1:{port}/api/v1", timeout=30)
                token = api.post("/auth/login", json={"email": EMAIL, "password": PASSWORD}).json()["data"][
                    "token"
                ]
                api.headers["Authorization"] = f"Bearer {token}"
                case_id = api.post("/cases", json={"title": "Smith v. Jones", "case_number": "B-1"}).json()[
                    "data"
                ]["id"]
                api.close()
                asyncio.run(sequencer_started(url))
                make = request_maker(load, name, port, token, case_id)
                result = asyncio.run(drive(port, children(serve.pid), url, make, args))
                result["sequencing"] = asyncio.run(sequencing_latency(url, result["kept"], result["heads"]))
                results[load] = result
            finally:
                for proc in (worker, serve):
                    if proc is not None:
                        proc.terminate()
                        try:
                            proc.wait(timeout=20)
                        except subprocess.TimeoutExpired:
                            proc.kill()
    return results


def request_maker(load: str, name: str, port: int, token: str, case_id: str) -> Any:
    """The next request's bytes: a new case each time, or a read of one case."""
    head = f"Host: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n"
    if load == "read":
        read = f"GET /api/v1/cases/{case_id} HTTP/1.1\r\n{head}\r\n".encode()
        return lambda: read
    counter = iter(range(10**9))

    def post() -> bytes:
        n = next(counter)
        case = {"title": f"Bench v. Load {n}", "case_number": f"L-{name}-{n}", "client_name": "Bench Corp"}
        body = json.dumps(case).encode()
        return (
            f"POST /api/v1/cases HTTP/1.1\r\n{head}Content-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode() + body

    return post


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] if ordered else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, help="the src/ directory of the code before")
    parser.add_argument("--after", type=Path, default=HERE / "src")
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--sample-ms", type=float, default=50.0)
    parser.add_argument("--loads", default="create,read", help="comma-separated: create, read")
    parser.add_argument("--only", default="before,after", help="comma-separated: before, after")
    args = smoke.parse_args(parser, only="after", loads="create", seconds=1.0, connections=2)
    if "before" in args.only and args.before is None:
        parser.error("--before is required unless --only after")
    variants = [
        (name, src) for name, src in (("before", args.before), ("after", args.after)) if name in args.only
    ]
    table = {name: run_variant(name, src, args) for name, src in variants}
    print(
        f"\n{args.connections} connections, {args.seconds:g} s per load, "
        "serve --workers 2 + one worker, PostgreSQL"
    )
    print(
        "| code | load | req/s | p50 ms | p99 ms | server CPU ms/req | samples "
        "| samples with an audit lock wait "
        "| backends waiting on audit locks (mean) | on any lock (mean) | errors |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, loads in table.items():
        for load, r in loads.items():
            s: Samples = r["samples"]
            print(
                f"| {name} | {load} | {r['rps']:.0f} | {r['p50']:.1f} | {r['p99']:.1f} | {r['cpu_ms']:.2f} | "
                f"{s.count} | {s.with_audit_wait} ({s.with_audit_wait / max(s.count, 1):.0%}) | "
                f"{s.audit_waiting / max(s.count, 1):.2f} | {s.lock_waiting / max(s.count, 1):.2f} | "
                f"{r['errors']} |"
            )
    for load in args.loads.split(","):
        if "before" in table and "after" in table:
            b, a = table["before"][load], table["after"][load]
            print(f"{load}: server CPU per request after/before = {a['cpu_ms'] / b['cpu_ms']:.2f}")
    for name, loads in table.items():
        for load, r in loads.items():
            s = r["samples"]
            top = ", ".join(f"{k} {v / max(s.count, 1):.2f}" for k, v in s.events.most_common(6))
            print(f"{name} {load}: active backends per sample by wait: {top}")
            if s.examples:
                print(f"   waiting statements: {dict(s.examples.most_common(3))}")
    for load, r in table.get("after", {}).items():
        seq = r["sequencing"]
        if seq:
            print(
                f"sequencing latency ({load} load, {len(seq)} requests): "
                f"p50 {percentile(seq, 0.5) * 1000:.0f} ms, "
                f"p99 {percentile(seq, 0.99) * 1000:.0f} ms, max {max(seq) * 1000:.0f} ms"
            )


if __name__ == "__main__":
    main()
