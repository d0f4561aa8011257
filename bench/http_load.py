"""HTTP load: Casefile against a bare Starlette app answering the same JSON, same client, same run.

Starts `casefile serve` (one process unless `--workers`) on a fresh database and a bare Starlette
app (uvicorn, one process) that answers each measured path with the bytes Casefile answered it
with, then drives both, one after the other, with the same load generator: `--connections`
keep-alive HTTP/1.1 connections on loopback, each sending its next request as soon as the last
answer is in, for `--seconds` per scenario (after a one-second warm-up). Prints requests per
second, p50 and p99 latency, and the ratio Casefile / bare, for:

- `GET /cases/{id}` with an administrator's access token (authentication, matter access, the
  audit entry of the read);
- `POST /cases` (a new case each time: number, outbox event, audit entry);
- `GET /cases` (first page of 20 of the seeded cases);
- `GET /cases?search=...` (full-text search over them).

The load generator is a small asyncio client over raw sockets (`asyncio.open_connection`), not
httpx: its cost per request is a fraction of httpx's, so that the bare app's figure measures the
server rather than the client. Client and servers share the machine (2 cores here): the ratio of
two figures from the same run is what compares, not the absolute numbers.

Run: `python bench/http_load.py [--db sqlite|postgresql|both] [--connections 16] [--seconds 8]
[--workers 1] [--redis redis://127.0.0.1:6379/14]`. PostgreSQL: a database `hotpath_load_<random>`
on CASEFILE_BENCH_PG (default the local server), created and dropped. Loopback only.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import smoke

PG = os.environ.get("CASEFILE_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
EMAIL, PASSWORD = "admin@bench.test", "Bench-Passw0rd-123"
SEED_CASES = 300
WORDS = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(url: str, proc: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{url}: server exited with {proc.returncode}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=1).status_code < 500:
                return
        time.sleep(0.2)
    raise RuntimeError(f"{url}: server did not start")


@contextlib.contextmanager
def process(args: list[str], env: dict[str, str], ready_url: str) -> Iterator[int]:
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(ready_url, proc)
        yield proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def postgres_database() -> Iterator[str]:
    name = f"hotpath_load_{secrets.token_hex(4)}"

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


def cpu_seconds(pid: int) -> float:
    """CPU (user + system) used so far by `pid` and its descendants that are alive (uvicorn's
    worker processes), from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                children.setdefault(int(fields[1]), []).append(int(entry))
    total, todo = 0.0, [pid]
    while todo:
        current = todo.pop()
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        todo.extend(children.get(current, []))
    return total


# --- the load generator ---------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    name: str
    method: str
    path: str
    body: Callable[[], bytes] | None = None  # a new body per request (POST)
    expect: int = 200


def _request_bytes(scenario: Scenario, host: str, token: str) -> Callable[[], bytes]:
    head = f"{scenario.method} {scenario.path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\n"
    if scenario.body is None:
        fixed = (head + "\r\n").encode()
        return lambda: fixed
    make = scenario.body

    def with_body() -> bytes:
        body = make()
        return (
            head + f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode() + body

    return with_body


async def _one_connection(
    port: int, next_request: Callable[[], bytes], until: float, warm_until: float, latencies: list[float]
) -> tuple[int, int]:
    """Send requests back to back on one keep-alive connection until `until`; latencies of those
    sent after `warm_until`. Returns (answers counted, answers with an unexpected status)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    done = bad = 0
    try:
        while True:
            start = time.perf_counter()
            if start >= until:
                break
            writer.write(next_request())
            status_line = await reader.readline()
            status = int(status_line.split()[1])
            length = 0
            while True:
                line = await reader.readline()
                if line in (b"\r\n", b""):
                    break
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            await reader.readexactly(length)
            end = time.perf_counter()
            if start >= warm_until:
                latencies.append(end - start)
                done += 1
                bad += status >= 400
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
    return done, bad


async def drive(
    port: int, pid: int, scenario: Scenario, token: str, connections: int, seconds: float
) -> dict[str, float]:
    next_request = _request_bytes(scenario, f"127.0.0.1:{port}", token)
    now = time.perf_counter()
    warm_until, until = now + 1.0, now + 1.0 + seconds
    latencies: list[float] = []
    tasks = [
        asyncio.create_task(_one_connection(port, next_request, until, warm_until, latencies))
        for _ in range(connections)
    ]
    await asyncio.sleep(max(0.0, warm_until - time.perf_counter()))
    cpu_start = cpu_seconds(pid)
    results = await asyncio.gather(*tasks)
    cpu = cpu_seconds(pid) - cpu_start
    done = sum(r[0] for r in results)
    bad = sum(r[1] for r in results)
    latencies.sort()
    return {
        "rps": done / seconds,
        "p50": statistics.median(latencies) * 1000 if latencies else float("nan"),
        "p99": latencies[int(len(latencies) * 0.99) - 1] * 1000 if latencies else float("nan"),
        "errors": bad,
        "cpu_ms": cpu / done * 1000 if done else float("nan"),  # server CPU per answered request
    }


# --- the bare app ---------------------------------------------------------------------------


def bare_app_main(port: int, answers_file: str) -> None:
    """The baseline: Starlette answering each path with the stored bytes (and status)."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    answers: dict[str, Any] = json.loads(Path(answers_file).read_text())

    async def answer(request: Request) -> Response:
        key = f"{request.method} {request.url.path}"
        if request.url.query:
            key += "?" + request.url.query
        found = answers.get(key) or answers.get(
            f"{request.method} {request.url.path.rsplit('/', 1)[0]}/{{id}}"
        )
        if found is None:  # a path no scenario measures (the readiness check with --only)
            return Response(b"{}", status_code=404, media_type="application/json")
        status, body = found
        if request.method == "POST":
            await request.body()
        return Response(body.encode(), status_code=status, media_type="application/json")

    app = Starlette(routes=[Route("/{path:path}", answer, methods=["GET", "POST"])])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


# --- one database ---------------------------------------------------------------------------


# `--only get,post`: the scenarios to run (profiling one request kind with py-spy, say).
SCENARIO_KEYS = {
    "GET /cases/{id}": "get",
    "POST /cases": "post",
    "GET /cases (list)": "list",
    "GET /cases?search=": "search",
}


def run_db(kind: str, args: argparse.Namespace) -> list[tuple[str, dict[str, float], dict[str, float]]]:
    tmp = Path(tempfile.mkdtemp(prefix="hotpath-load-"))
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
        }
        if url:
            env["CASEFILE_DATABASE_URL"] = url
        if args.redis:
            env["CASEFILE_REDIS_URL"] = args.redis
            env["CASEFILE_REDIS_KEY_PREFIX"] = f"hotpath-bench-{secrets.token_hex(4)}"
        serve = [sys.executable, "-c", "from casefile.cli import main; main()", "serve", "--port", str(port)]
        if args.cprofile:
            # The server under cProfile, its stats written when it stops. uvicorn re-raises the
            # SIGTERM it was stopped with once it has shut down: turned into SystemExit here,
            # which cProfile.run catches before writing the file.
            out = str(Path(args.cprofile).resolve() / f"serve-{kind}.pstats")
            code = (
                "import cProfile, signal, sys; from casefile.cli import main; "
                "signal.signal(signal.SIGTERM, lambda *_: sys.exit(0)); "
                f"cProfile.run('main(standalone_mode=False)', {out!r})"
            )
            serve = [sys.executable, "-c", code, "serve", "--port", str(port)]
        serve += ["--workers", str(args.workers), "--no-worker"]
        base = f"http://127.0.0.1:{port}"
        server_pid = stack.enter_context(process(serve, env, base + "/healthz"))
        api = httpx.Client(base_url=base + "/api/v1", timeout=30)
        token = api.post("/auth/login", json={"email": EMAIL, "password": PASSWORD}).json()["data"]["token"]
        api.headers["Authorization"] = f"Bearer {token}"
        counter = iter(range(10**9))

        def case_body() -> dict[str, Any]:
            n = next(counter)
            return {
                "title": f"{WORDS[n % len(WORDS)]} v. {WORDS[(n // 6) % len(WORDS)]} matter {n}",
                "case_number": f"L-{secrets.token_hex(3)}-{n}",
                "client_name": f"{WORDS[n % len(WORDS)]} Corp",
                "description": "Contract dispute over delivery terms and late payment",
                "status": "active",
                "priority": "high",
            }

        ids = [api.post("/cases", json=case_body()).json()["data"]["id"] for _ in range(SEED_CASES)]
        case_id = ids[len(ids) // 2]
        scenarios = [
            Scenario("GET /cases/{id}", "GET", f"/api/v1/cases/{case_id}"),
            Scenario("POST /cases", "POST", "/api/v1/cases", lambda: json.dumps(case_body()).encode(), 201),
            Scenario("GET /cases (list)", "GET", "/api/v1/cases?limit=20"),
            Scenario("GET /cases?search=", "GET", "/api/v1/cases?search=globex&limit=20"),
        ]
        if args.only:
            scenarios = [s for s in scenarios if SCENARIO_KEYS[s.name] in args.only.split(",")]
        # What the bare app answers: Casefile's own answers to the same requests.
        answers: dict[str, Any] = {}
        for s in scenarios:
            content = s.body() if s.body else None
            headers = {"Content-Type": "application/json"} if content else {}
            r = api.request(s.method, s.path.removeprefix("/api/v1"), content=content, headers=headers)
            assert r.status_code == s.expect, r.text
            key = f"{s.method} {s.path}"
            answers[key] = [r.status_code, r.text]
        answers_file = tmp / "answers.json"
        answers_file.write_text(json.dumps(answers))
        api.close()

        rows = []
        for s in scenarios:
            rows.append(
                (s.name, asyncio.run(drive(port, server_pid, s, token, args.connections, args.seconds)))
            )
        bare_port = free_port()
        bare = [sys.executable, __file__, "--bare-server", str(bare_port), str(answers_file)]
        with process(
            bare, dict(os.environ), f"http://127.0.0.1:{bare_port}/api/v1/cases?limit=20"
        ) as bare_pid:
            table = []
            for (name, cf), s in zip(rows, scenarios, strict=True):
                baseline = drive(bare_port, bare_pid, s, token, args.connections, args.seconds)
                table.append((name, cf, asyncio.run(baseline)))
        return table


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--bare-server":
        bare_app_main(int(sys.argv[2]), sys.argv[3])
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", default="both", choices=["sqlite", "postgresql", "both"])
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--only", default="", help="comma-separated: get, post, list, search (default all)")
    parser.add_argument("--redis", default=None, help="CASEFILE_REDIS_URL for the Casefile server")
    parser.add_argument(
        "--cprofile",
        default=None,
        help="a directory: run the server (one worker) under cProfile, stats in serve-<db>.pstats",
    )
    args = smoke.parse_args(parser, db="sqlite", connections=2, seconds=0.5, only="get")
    if args.cprofile and args.workers != 1:
        parser.error("--cprofile profiles one server process: use it with --workers 1")
    kinds = ["sqlite", "postgresql"] if args.db == "both" else [args.db]
    for kind in kinds:
        table = run_db(kind, args)
        print(
            f"\n## {kind}: {args.connections} connections, {args.seconds:g} s per scenario, "
            f"casefile serve --workers {args.workers}{' + Redis' if args.redis else ''}"
        )
        print(
            "| request | Casefile req/s | p50 ms | p99 ms | server CPU ms/req "
            "| bare req/s | p50 ms | p99 ms | bare CPU ms/req | ratio |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for name, cf, bare in table:
            errors = f" ({cf['errors']:.0f} errors)" if cf["errors"] else ""
            print(
                f"| {name}{errors} | {cf['rps']:.0f} | {cf['p50']:.1f} | {cf['p99']:.1f} | "
                f"{cf['cpu_ms']:.2f} | "
                f"{bare['rps']:.0f} | {bare['p50']:.1f} | {bare['p99']:.1f} | {bare['cpu_ms']:.2f} | "
                f"{cf['rps'] / bare['rps']:.3f} |"
            )


if __name__ == "__main__":
    main()
