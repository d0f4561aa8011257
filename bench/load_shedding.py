"""Load shedding under overload: `GET /cases` from many connections at once, on loopback.

Starts `casefile serve` (one process) on a fresh database with 300 cases, then drives
`GET /api/v1/cases?limit=20` from `--connections` keep-alive connections for `--seconds` (after a
warm-up of two seconds), each sending its next request as soon as the last answer is in. A 503
`OVERLOADED` is counted apart; its client waits the answer's `Retry-After` before sending again,
as a well-behaved client does (`--no-backoff`: at once, the worst case for the server). Prints, per
run: requests answered (200) per second with their p50, p99 and worst latency, the 503s, anything
else, and the server's own count of shed requests (`/metrics`).

`--shedding both` (the default) runs the server twice: with the default limits (16 at once, 16
waiting, 5 s of wait: docs/operations.md#load-shedding), and without (`CASEFILE_MAX_CONCURRENT_
REQUESTS=0`, every request admitted, as before). Issue 26's figures: bench/README.md.

Run: `python bench/load_shedding.py [--db sqlite|postgresql|both] [--connections 200]
[--seconds 20] [--shedding on|off|both] [--no-backoff] [--max-concurrent N] [--max-queued N]`;
`--smoke` is a quick check that it works (20 connections, 3 s, the limits made small so that
shedding happens). Loopback only.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import secrets
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from http_load import EMAIL, PASSWORD, WORDS, free_port, postgres_database, process

SEED_CASES = 300
PATH = "/api/v1/cases?limit=20"


@dataclass
class Tally:
    answered: list[float] = field(default_factory=list)  # latencies of the 200s, seconds
    shed: int = 0
    other: int = 0


async def _connection(
    port: int, request: bytes, warm_until: float, until: float, tally: Tally, backoff: bool
) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        while (start := time.perf_counter()) < until:
            writer.write(request)
            status = int((await reader.readline()).split()[1])
            length, retry_after = 0, 1.0
            while (line := await reader.readline()) not in (b"\r\n", b""):
                name, _, value = line.partition(b":")
                if name.lower() == b"content-length":
                    length = int(value)
                elif name.lower() == b"retry-after":
                    retry_after = float(value)
            await reader.readexactly(length)
            elapsed = time.perf_counter() - start
            counted = start >= warm_until
            if status == 200:
                if counted:
                    tally.answered.append(elapsed)
            elif status == 503:
                tally.shed += counted
                if backoff:
                    await asyncio.sleep(min(retry_after, max(0.0, until - time.perf_counter())))
            else:
                tally.other += counted
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


async def drive(port: int, token: str, connections: int, seconds: float, backoff: bool) -> Tally:
    request = (
        f"GET {PATH} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n\r\n"
    ).encode()
    tally = Tally()
    now = time.perf_counter()
    warm_until, until = now + 2.0, now + 2.0 + seconds
    await asyncio.gather(
        *(_connection(port, request, warm_until, until, tally, backoff) for _ in range(connections))
    )
    return tally


def shed_total(base: str) -> float:
    text = httpx.get(base + "/metrics", timeout=30).text
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("casefile_http_requests_shed_total")
    )


@contextlib.contextmanager
def server(kind: str, limits: dict[str, str]) -> Iterator[tuple[int, str, str]]:
    """(port, base URL, token) of a seeded `casefile serve` on a fresh database."""
    tmp = Path(tempfile.mkdtemp(prefix="load-shedding-"))
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
            "CASEFILE_RATE_LIMIT_LOGIN": "100000000/minute",
            "CASEFILE_AI_ENABLED": "false",
            "CASEFILE_LOG_LEVEL": "WARNING",
            **limits,
        }
        if url:
            env["CASEFILE_DATABASE_URL"] = url
        serve = [sys.executable, "-c", "from casefile.cli import main; main()", "serve", "--port", str(port)]
        base = f"http://127.0.0.1:{port}"
        stack.enter_context(process([*serve, "--no-worker"], env, base + "/healthz"))
        with httpx.Client(base_url=base + "/api/v1", timeout=30) as api:
            token = api.post("/auth/login", json={"email": EMAIL, "password": PASSWORD}).json()["data"][
                "token"
            ]
            api.headers["Authorization"] = f"Bearer {token}"
            for n in range(SEED_CASES):
                body = {
                    "title": f"{WORDS[n % len(WORDS)]} matter {n}",
                    "case_number": f"L-{secrets.token_hex(3)}-{n}",
                    "client_name": f"{WORDS[n % len(WORDS)]} Corp",
                    "status": "active",
                }
                assert api.post("/cases", json=body).status_code == 201
        yield port, base, token


def run(kind: str, shedding: str, args: argparse.Namespace) -> str:
    limits: dict[str, str] = {}
    if shedding == "off":
        limits["CASEFILE_MAX_CONCURRENT_REQUESTS"] = "0"
    elif args.smoke:
        limits |= {"CASEFILE_MAX_CONCURRENT_REQUESTS": "2", "CASEFILE_MAX_QUEUED_REQUESTS": "4"}
    else:
        if args.max_concurrent is not None:
            limits["CASEFILE_MAX_CONCURRENT_REQUESTS"] = str(args.max_concurrent)
        if args.max_queued is not None:
            limits["CASEFILE_MAX_QUEUED_REQUESTS"] = str(args.max_queued)
    with server(kind, limits) as (port, base, token):
        before = shed_total(base)
        tally = asyncio.run(drive(port, token, args.connections, args.seconds, not args.no_backoff))
        counted = shed_total(base) - before
    latencies = sorted(tally.answered)
    if not latencies:
        return f"| {kind} | {shedding} | 0 | - | - | - | {tally.shed} | {tally.other} | {counted:.0f} |"
    p99 = latencies[max(0, int(len(latencies) * 0.99) - 1)]
    return (
        f"| {kind} | {shedding} | {len(latencies) / args.seconds:.0f} | "
        f"{statistics.median(latencies) * 1000:.0f} | {p99 * 1000:.0f} | {latencies[-1] * 1000:.0f} | "
        f"{tally.shed} | {tally.other} | {counted:.0f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", default="both", choices=["sqlite", "postgresql", "both"])
    parser.add_argument("--connections", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--shedding", default="both", choices=["on", "off", "both"])
    parser.add_argument("--no-backoff", action="store_true", help="send again at once after a 503")
    parser.add_argument("--max-concurrent", type=int, default=None, help="CASEFILE_MAX_CONCURRENT_REQUESTS")
    parser.add_argument("--max-queued", type=int, default=None, help="CASEFILE_MAX_QUEUED_REQUESTS")
    parser.add_argument(
        "--smoke", action="store_true", help="a quick check: 20 connections, 3 s, small limits"
    )
    args = parser.parse_args()
    if args.smoke:
        args.connections, args.seconds = 20, 3.0
    kinds = ["sqlite", "postgresql"] if args.db == "both" else [args.db]
    modes = ["on", "off"] if args.shedding == "both" else [args.shedding]
    limits = f", limits {args.max_concurrent or 'default'} at once / {args.max_queued or 'default'} waiting"
    print(
        f"\n## GET /cases, {args.connections} connections, {args.seconds:g} s{limits}"
        f"{', no backoff after a 503' if args.no_backoff else ''}"
    )
    print("| database | shedding | answered/s | p50 ms | p99 ms | max ms | 503s | other | shed (/metrics) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for kind in kinds:
        for mode in modes:
            print(run(kind, mode, args), flush=True)


if __name__ == "__main__":
    main()
