"""A burst of concurrent creates: `--creates` `POST /cases` sent at the same instant, each on its
own keep-alive connection, against `casefile serve` (one process, no worker) on a fresh database
with `--webhooks` active webhooks subscribed to every event (so each create writes its case, its
client party, two outbox events, their delivery rows and two audit entries). Cases take automatic
numbers (no `case_number` in the body), the common case.

Prints, per round: the latency of the fastest, median, p99 and slowest create, the burst's
makespan (first request sent to last answer), the server's CPU per create (user + system, from
/proc) and the number of non-201 answers. In a burst the slowest create cannot finish before the
server has done the work of all of them, so "slowest" is bounded below by `creates` x CPU per
create (on one core); what a fair queue adds above that is the time the server sat idle.

Run: `python bench/create_burst.py [--db sqlite|postgresql|both] [--creates 400] [--rounds 3]
[--webhooks 2]`. Loopback only; PostgreSQL: a database `hotpath_load_<random>` on
CASEFILE_BENCH_PG (default the local server), created and dropped.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import httpx
import smoke
from http_load import EMAIL, PASSWORD, WORDS, cpu_seconds, free_port, postgres_database, process


async def _create(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes, start: asyncio.Event
) -> tuple[float, float, int]:
    """Send one request when `start` is set; (sent at, answered at, status)."""
    await start.wait()
    sent = time.perf_counter()
    writer.write(request)
    status = int((await reader.readline()).split()[1])
    length = 0
    while (line := await reader.readline()) not in (b"\r\n", b""):
        if line[:15].lower() == b"content-length:":
            length = int(line[15:])
    await reader.readexactly(length)
    return sent, time.perf_counter(), status


async def burst(port: int, pid: int, token: str, creates: int, first: int) -> dict[str, float]:
    connections = [await asyncio.open_connection("127.0.0.1", port) for _ in range(creates)]
    requests = []
    for n in range(first, first + creates):
        body = json.dumps(
            {
                "title": f"{WORDS[n % len(WORDS)]} v. {WORDS[(n // 6) % len(WORDS)]} burst {n}",
                "client_name": f"{WORDS[n % len(WORDS)]} Corp",
                "description": "Contract dispute over delivery terms and late payment",
                "status": "active",
                "priority": "high",
            }
        ).encode()
        requests.append(
            (
                f"POST /api/v1/cases HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
            ).encode()
            + body
        )
    start = asyncio.Event()
    tasks = [
        asyncio.create_task(_create(reader, writer, request, start))
        for (reader, writer), request in zip(connections, requests, strict=True)
    ]
    await asyncio.sleep(0.5)  # every connection accepted, the server idle
    cpu0 = cpu_seconds(pid)
    start.set()
    results = await asyncio.gather(*tasks)
    cpu = cpu_seconds(pid) - cpu0
    for _, writer in connections:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
    latencies = sorted(done - sent for sent, done, _ in results)
    return {
        "min": latencies[0] * 1000,
        "p50": latencies[len(latencies) // 2] * 1000,
        "p99": latencies[int(len(latencies) * 0.99) - 1] * 1000,
        "max": latencies[-1] * 1000,
        "makespan": (max(r[1] for r in results) - min(r[0] for r in results)) * 1000,
        "cpu_ms": cpu / creates * 1000,
        "errors": sum(status != 201 for _, _, status in results),
    }


def run_db(kind: str, args: argparse.Namespace) -> list[dict[str, float]]:
    tmp = Path(tempfile.mkdtemp(prefix="create-burst-"))
    with contextlib.ExitStack() as stack:
        url = stack.enter_context(postgres_database()) if kind == "postgresql" else None
        port = free_port()
        env = {
            **os.environ,
            "CASEFILE_DATA_DIR": str(tmp / "data"),
            "CASEFILE_ADMIN_EMAIL": EMAIL,
            "CASEFILE_ADMIN_PASSWORD": PASSWORD,
            "CASEFILE_RATE_LIMIT_USER": "100000000/hour",
            "CASEFILE_RATE_LIMIT_ADMIN": "100000000/hour",
            "CASEFILE_AI_ENABLED": "false",
            "CASEFILE_LOG_LEVEL": "WARNING",
            # The webhooks point at loopback; nothing delivers (--no-worker), the rows are written.
            "CASEFILE_WEBHOOK_ALLOW_PRIVATE_URLS": "true",
        }
        if url:
            env["CASEFILE_DATABASE_URL"] = url
        serve = [sys.executable, "-c", "from casefile.cli import main; main()", "serve", "--port", str(port)]
        serve += ["--no-worker"]
        base = f"http://127.0.0.1:{port}"
        pid = stack.enter_context(process(serve, env, base + "/healthz"))
        with httpx.Client(base_url=base + "/api/v1", timeout=30) as api:
            r = api.post("/auth/login", json={"email": EMAIL, "password": PASSWORD})
            token = r.json()["data"]["token"]
            api.headers["Authorization"] = f"Bearer {token}"
            for n in range(args.webhooks):
                hook = {"name": f"bench {n}", "url": f"http://127.0.0.1:9/hook{n}", "events": ["*"]}
                hook["secret"] = "bench-secret-0123456789"
                assert api.post("/admin/webhooks", json=hook).status_code == 201
            warm = {"title": "warm-up", "client_name": "Acme Corp"}
            for _ in range(20):  # compiled statements, pool, caches
                assert api.post("/cases", json=warm).status_code == 201
        return [
            asyncio.run(burst(port, pid, token, args.creates, i * args.creates)) for i in range(args.rounds)
        ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", default="sqlite", choices=["sqlite", "postgresql", "both"])
    parser.add_argument("--creates", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--webhooks", type=int, default=2)
    args = smoke.parse_args(parser, db="sqlite", creates=10, rounds=1, webhooks=1)
    kinds = ["sqlite", "postgresql"] if args.db == "both" else [args.db]
    for kind in kinds:
        rounds = run_db(kind, args)
        print(f"\n## {kind}: bursts of {args.creates} concurrent POST /cases, {args.webhooks} webhooks")
        print(
            "| round | fastest ms | p50 ms | p99 ms | slowest ms | makespan ms "
            "| server CPU ms/create | errors |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for i, r in enumerate(rounds, 1):
            print(
                f"| {i} | {r['min']:.0f} | {r['p50']:.0f} | {r['p99']:.0f} | {r['max']:.0f} | "
                f"{r['makespan']:.0f} | {r['cpu_ms']:.2f} | {r['errors']:.0f} |"
            )


if __name__ == "__main__":
    main()
