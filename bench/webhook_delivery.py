"""Webhook delivery throughput and latency: one `casefile worker` process against a local receiver.

What it does, in order (see the webhook section of docs/research/bench-notes-2026-11.md, and
docs/research/bench-webhook-results-2026-11.md for the full figures and diagnosis):

1. starts a minimal HTTP/1.1 receiver in its own process (this same file with `--receiver`: a raw
   asyncio protocol with keep-alive that answers `200 ok` at once) on a free loopback port; it
   counts requests, records the first arrival time of every payload `id` (duplicates counted) and
   keeps a sample of raw requests (headers + body) for signature checks;
2. prepares a fresh database: PostgreSQL (default; database `casefile_bench_webhooks`, created and
   dropped by this script) or `--database sqlite` (the embedded default, in a fresh temporary data
   dir); runs `casefile migrate` against it; registers one webhook subscribed to `case.created`
   pointing at the receiver, through the service layer (`casefile.webhooks.service.create_webhook`,
   the same validation and secret sealing as the admin API, without an API server process
   competing for the CPU), with `CASEFILE_WEBHOOK_ALLOW_PRIVATE_URLS=true`;
3. baseline: a bare `httpx.AsyncClient` (64 connections) POSTs `--events` payloads built by the
   worker's own `payload_body`, each signed with `signature_headers` at send time, to the same
   receiver with 64 concurrent senders: requests/s (the goal's ratio is against this one); then the
   same 64 connections split over 8 clients in this one process, as the worker splits its own
   (`--baseline-shards`): the like-for-like client, whose ratio is reported too;
4. starts ONE `casefile worker` subprocess (`CASEFILE_WORKER_CONCURRENCY=64` and
   `CASEFILE_WORKER_PER_WEBHOOK_CONCURRENCY=64`: one receiver, so the per-webhook cap is raised to
   the global one) and runs the phases:
   - `warmup` (`--warmup-events`, not reported in the goals): the worker is up, pools are warm;
   - `live`: `--events` events created through `casefile.events.outbox.emit` from this process in
     transactions of `--batch` events by `--producers` concurrent producers, as fast as they go,
     while the worker delivers (saturation): deliveries/s and the (queue-inclusive) latency;
   - `paced`: `--paced-events` events, one per transaction (like one API request each), at a fixed
     open-loop rate `--paced-rate` (capped at half the live throughput): the latency of a worker
     that is not saturated;
   - `backlog`: the worker is stopped, `--events` events are created, a new worker is started:
     the pure drain rate, with no producer competing for the CPU;
   after each phase it waits (bounded) until every delivery is `succeeded`, then reads from the
   database: deliveries/s = deliveries / (first attempt start -> last attempt finish), and the
   event-to-first-attempt latency = `delivery_attempts.started_at` (attempt 1) -
   `events.occurred_at`; plus event-to-receiver latency (receiver arrival time - occurred_at) and
   CPU seconds used by each process (worker, receiver, PostgreSQL backends, this process);
5. checks per phase: requests received == events, no duplicate payload `id`, the set of ids equals
   the events' payload ids, every delivery `succeeded` at its first attempt, and the signatures of
   a sample verify with `casefile.webhooks.verify_signature` (and a tampered body does not);
6. with `--profile`, the worker runs under `py-spy record --nonblocking` (pip-installed into the
   venv) and a summary of where the worker's CPU goes is added to the results (run it separately
   from the figures: py-spy itself takes CPU on a 2-core machine);
7. prints a table and writes JSON to `bench/results/webhook_delivery-<db>-<timestamp>.json`.

The whole run is bounded by a global deadline (`--deadline-minutes`, default 15); every
subprocess is stopped on every exit path (and gets SIGTERM if this process dies), the bench
database is dropped and the temporary directory removed. All traffic stays on the loopback.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import math
import os
import platform
import resource
import secrets
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import smoke

ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = ROOT / "bench" / "results"
DEFAULT_ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
DEFAULT_DB_NAME = "casefile_bench_webhooks"
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
CONCURRENCY = 64
GOAL_DELIVERIES_PER_S = 1000.0
GOAL_RATIO = 0.5
GOAL_P50_MS = 50.0
EVENT_NAME = "case.created"
WEBHOOK_SECRET = "whsec_bench_" + "x" * 24
SAMPLES_WANTED = 200
CLK_TCK = os.sysconf("SC_CLK_TCK")


class BenchError(RuntimeError):
    pass


def log(message: str) -> None:
    print(f"[{datetime.now(UTC).strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# The receiver (runs in its own process: `python bench/webhook_delivery.py --receiver`).

OK_RESPONSE = b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\nok"
ID_MARK = b'"id":"'


class ReceiverState:
    def __init__(self) -> None:
        self.reset(0)

    def reset(self, sample_every: int) -> None:
        self.count = 0
        self.first_seen: dict[str, float] = {}
        self.duplicates = 0
        self.duplicate_ids: list[str] = []
        self.without_id = 0
        self.sample_every = sample_every
        self.samples: list[dict[str, Any]] = []

    def delivery(self, head: bytes, body: bytes) -> None:
        now = time.time()
        self.count += 1
        start = body.find(ID_MARK)
        if start < 0:
            self.without_id += 1
        else:
            start += len(ID_MARK)
            payload_id = body[start : body.find(b'"', start)].decode()
            if payload_id in self.first_seen:
                self.duplicates += 1
                if len(self.duplicate_ids) < 20:
                    self.duplicate_ids.append(payload_id)
            else:
                self.first_seen[payload_id] = now
        if self.sample_every and self.count % self.sample_every == 0 and len(self.samples) < SAMPLES_WANTED:
            headers = {}
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.decode("latin-1").partition(":")
                headers[name.strip()] = value.strip()
            self.samples.append({"headers": headers, "body": base64.b64encode(body).decode()})

    def stats(self, with_arrivals: bool) -> dict[str, Any]:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return {
            "count": self.count,
            "unique": len(self.first_seen),
            "duplicates": self.duplicates,
            "duplicate_ids": self.duplicate_ids,
            "without_id": self.without_id,
            "samples": self.samples,
            "cpu_seconds": usage.ru_utime + usage.ru_stime,
            "first_seen": self.first_seen if with_arrivals else None,
        }


class ReceiverProtocol(asyncio.Protocol):
    """HTTP/1.1 with keep-alive and pipelining; requests must carry Content-Length (httpx does)."""

    def __init__(self, state: ReceiverState) -> None:
        self.state = state
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(self.buffer[:end])
            lowered = head.lower()
            mark = lowered.find(b"\r\ncontent-length:")
            length = 0
            if mark >= 0:
                stop = lowered.find(b"\r\n", mark + 2)
                length = int(lowered[mark + 17 : stop if stop >= 0 else len(lowered)].strip())
            total = end + 4 + length
            if len(self.buffer) < total:
                return
            body = bytes(self.buffer[end + 4 : total])
            del self.buffer[:total]
            self.request(head, body)

    def request(self, head: bytes, body: bytes) -> None:
        assert self.transport is not None
        method, _, rest = head.partition(b" ")
        target = rest.partition(b" ")[0].decode()
        if target.startswith("/__"):
            parts = urlsplit(target)
            query = parse_qs(parts.query)
            if parts.path == "/__reset":
                self.state.reset(int(query.get("sample_every", ["0"])[0]))
                answer = b"{}"
            else:
                answer = json.dumps(self.state.stats("arrivals" in query)).encode()
            self.transport.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
                % (len(answer), answer)
            )
            return
        if method == b"POST":
            self.state.delivery(head, body)
        self.transport.write(OK_RESPONSE)


async def receiver_main() -> None:
    loop = asyncio.get_running_loop()
    state = ReceiverState()
    server = await loop.create_server(lambda: ReceiverProtocol(state), "127.0.0.1", 0, backlog=1024)
    print(server.sockets[0].getsockname()[1], flush=True)
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    async with server:
        await stop.wait()


# ---------------------------------------------------------------------------------------------
# Processes


def die_with_parent(command: list[str]) -> list[str]:
    """Prefix `command` with `setpriv --pdeathsig TERM` (util-linux, which then execs it: same pid)
    so that it gets SIGTERM if the benchmark process dies without cleaning up."""
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "TERM", "--", *command] if setpriv else command


def proc_cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads), from /proc; 0 if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def postgres_cpu_seconds(database: str) -> float:
    """The backends connected to `database` plus the server's own processes (walwriter,
    checkpointer...), not other databases' backends. Backends that ended during a phase are
    missed, so this is a lower bound; the worker's pooled backends stay."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() != "postgres":
                    continue
                title = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if f" {database} " in title or "(" not in title:
                total += proc_cpu_seconds(int(entry.name))
    return total


def machine_cpu_seconds() -> dict[str, float]:
    """Whole machine, all CPUs, from /proc/stat: busy (user+nice+system+irq+softirq) and steal."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields[:8]
    return {"busy": (user + nice + system + irq + softirq) / CLK_TCK, "steal": steal / CLK_TCK}


def self_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def children_of(pid: int) -> list[int]:
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError):
                found += [int(c) for c in (task / "children").read_text().split()]
    return found


async def wait_exit(proc: subprocess.Popen[bytes], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while proc.poll() is None:
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


async def stop_process(
    proc: subprocess.Popen[bytes] | None, timeout: float = 15, pid: int | None = None
) -> None:
    """SIGTERM (to `pid` if given: the worker under py-spy), wait, then SIGKILL."""
    if proc is None or proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid or proc.pid, signal.SIGTERM)
    if not await wait_exit(proc, timeout):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        await wait_exit(proc, 5)


def tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


# ---------------------------------------------------------------------------------------------
# Statistics and profiles


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    if not sorted_values:
        return math.nan
    return sorted_values[min(len(sorted_values) - 1, max(0, math.ceil(q * len(sorted_values)) - 1))]


def summary_ms(values_s: list[float]) -> dict[str, float]:
    ordered = sorted(v * 1000 for v in values_s)
    if not ordered:
        return {}
    return {
        "p50": round(percentile(ordered, 0.50), 2),
        "p90": round(percentile(ordered, 0.90), 2),
        "p99": round(percentile(ordered, 0.99), 2),
        "max": round(ordered[-1], 2),
        "mean": round(sum(ordered) / len(ordered), 2),
    }


STAGES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("record (outcome transaction)", ("record (casefile/webhooks/delivery.py",)),
    ("claim (claim_due transaction)", ("_claim_and_start (", "claim_due (")),
    ("attempt (HTTP request)", ("attempt (casefile/webhooks/delivery.py",)),
    ("wake-up listener", ("_listen_postgres", "_listen_redis", "listen (casefile/worker")),
    ("SQLite calls (aiosqlite threads)", ("_connection_worker_thread (aiosqlite/",)),
    # SQLAlchemy runs statements in greenlets, whose stacks do not show the coroutine (record or
    # claim) that started them: still database work of those two.
    ("SQLAlchemy in greenlets (record/claim statements)", ("(sqlalchemy/", "(greenlet")),
    ("asyncpg protocol (replies)", ("(asyncpg/",)),
    ("HTTP client outside attempt frames", ("(httpcore/", "(httpx/", "(h11/", "(anyio/")),
    ("imports", ("<frozen importlib",)),
)


def waiting_leaves() -> tuple[str, ...]:
    """Innermost frames of a thread that waits rather than computes (py-spy --nonblocking cannot
    always tell): the event loop in epoll, an aiosqlite thread blocked on its queue."""
    leaves = ["EpollSelector.select (selectors.py:"]
    with contextlib.suppress(Exception):
        import importlib.util

        spec = importlib.util.find_spec("aiosqlite.core")
        if spec and spec.origin:
            for number, text in enumerate(Path(spec.origin).read_text().splitlines(), start=1):
                if "tx.get()" in text:
                    leaves.append(f"_connection_worker_thread (aiosqlite/core.py:{number})")
    return tuple(leaves)


LIBRARIES: tuple[tuple[str, str], ...] = (
    ("sqlalchemy", "sqlalchemy/"),
    ("asyncpg", "asyncpg/"),
    ("aiosqlite/sqlite3", "aiosqlite/"),
    ("aiosqlite/sqlite3", "sqlite3/"),
    ("httpx", "httpx/"),
    ("httpcore", "httpcore/"),
    ("h11", "h11/"),
    ("anyio", "anyio/"),
    ("greenlet", "greenlet"),
    ("casefile", "casefile/"),
    ("asyncio", "asyncio/"),
    ("ssl/socket/selectors", "selectors.py"),
    ("ssl/socket/selectors", "socket.py"),
    ("json", "json/"),
    ("logging", "logging/"),
)


def frame_file(frame: str) -> str:
    start = frame.rfind("(")
    return frame[start + 1 :] if start >= 0 else frame


def summarise_profile(path: Path, top: int = 25) -> dict[str, Any]:
    """py-spy `--format raw` (collapsed stacks: `frame;frame;... count`): the share of samples that
    were waiting, then, of the others (CPU), the shares by stage of a delivery, by library of the
    innermost frame, and the top functions (self and inclusive)."""
    total = waiting = 0
    idle = waiting_leaves()
    stages: Counter[str] = Counter()
    libraries: Counter[str] = Counter()
    self_time: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = [f for f in stack.split(";") if f and not f.startswith(("process ", "thread "))]
        if not frames or frames[-1].startswith(idle):
            waiting += count
            continue
        total += count
        stage = next(
            (name for name, marks in STAGES if any(m in f for f in frames for m in marks)),
            "event loop / other (asyncio)",
        )
        stages[stage] += count
        # The innermost frame that belongs to a known library (else the innermost frame's file).
        library = "other"
        for frame in reversed(frames):
            where = frame_file(frame)
            library = next((name for name, mark in LIBRARIES if mark in where), "")
            if library:
                break
        libraries[library or "other"] += count
        self_time[frames[-1]] += count
        for frame in set(frames):
            inclusive[frame] += count

    def shares(counter: Counter[str], limit: int | None = None) -> list[tuple[str, float]]:
        return [(name, round(100 * n / max(1, total), 1)) for name, n in counter.most_common(limit)]

    return {
        "samples": total + waiting,
        "waiting_percent_of_samples": round(100 * waiting / max(1, total + waiting), 1),
        "cpu_samples": total,
        "by_stage_percent": shares(stages),
        "by_library_percent": shares(libraries),
        "top_self_percent": shares(self_time, top),
        "top_inclusive_percent": shares(inclusive, top),
    }


# ---------------------------------------------------------------------------------------------
# Results


@dataclass
class PhaseResult:
    name: str
    events: int
    emit_seconds: float = 0.0
    emit_per_s: float = 0.0
    wall_seconds: float = 0.0  # first emit (backlog: worker start) -> all succeeded seen by polling
    span_seconds: float = 0.0  # first attempt start -> last attempt finish (database)
    deliveries_per_s: float = 0.0  # deliveries / span_seconds
    event_to_first_attempt_ms: dict[str, float] = field(default_factory=dict)
    event_to_received_ms: dict[str, float] = field(default_factory=dict)
    event_to_recorded_ms: dict[str, float] = field(default_factory=dict)
    attempts: int = 0
    claim_transactions: int = 0  # distinct attempt-1 started_at values (claim_due stamps one per call)
    deliveries_per_claim: float = 0.0
    statuses: dict[str, int] = field(default_factory=dict)
    checks: dict[str, Any] = field(default_factory=dict)
    cpu_seconds: dict[str, float] = field(default_factory=dict)
    worker_log_problems: list[str] = field(default_factory=list)  # its WARNING/ERROR lines
    notes: list[str] = field(default_factory=list)


@dataclass
class Baseline:
    clients: int
    requests: int
    seconds: float
    requests_per_s: float
    errors: int
    received: int
    cpu_seconds: dict[str, float]


def fmt(value: float | None, digits: int = 0) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:,.{digits}f}"


def other_share(cpu: dict[str, float]) -> str:
    capacity = (os.cpu_count() or 1) * cpu.get("wall", 0.0)
    return f"{100 * cpu.get('other', 0.0) / capacity:.0f} %" if capacity else "-"


async def wait_idle(max_wait: float, busy_limit: float = 0.25) -> float:
    """Wait (at most `max_wait` s) until the machine's CPUs are less than `busy_limit` busy over a
    5 s window: other programs sharing the machine distort every figure here. Returns the share
    last seen."""
    deadline = time.monotonic() + max_wait
    while True:
        before, start = machine_cpu_seconds(), time.monotonic()
        await asyncio.sleep(5)
        after = machine_cpu_seconds()
        busy = (after["busy"] - before["busy"]) / ((os.cpu_count() or 1) * (time.monotonic() - start))
        if busy < busy_limit or time.monotonic() > deadline:
            log(f"machine {100 * busy:.0f} % busy before the run")
            return round(busy, 3)
        log(f"machine {100 * busy:.0f} % busy: waiting for it to calm down")


WORKER_SOURCES = (
    "webhooks/delivery.py",
    "webhooks/worker.py",
    "worker/lease.py",
    "worker/wakeup.py",
    "events/outbox.py",
    "db.py",
    "settings.py",
    "webhooks/ssrf.py",
)


def source_fingerprint() -> dict[str, str]:
    """SHA-256 (first 12 hex digits) of the sources the figures depend on: the tree is edited
    while benchmarks run, so each result says which code it measured (and whether it changed
    during the run)."""
    import hashlib

    package = ROOT / "src" / "casefile"
    return {
        name: hashlib.sha256((package / name).read_bytes()).hexdigest()[:12]
        for name in WORKER_SOURCES
        if (package / name).exists()
    }


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def print_table(result: dict[str, Any]) -> None:
    phases: list[dict[str, Any]] = result["phases"]
    baseline = result["baseline"]
    print()
    print(
        f"Webhook delivery: {result['database']}{' + redis' if result['redis'] else ''}, "
        f"{result['machine']['cpus']} CPUs, {result['started_at']}"
    )
    header = (
        f"{'phase':<8} {'events':>7} {'emit/s':>7} {'deliv/s':>8} {'wall/s':>7} "
        f"{'att p50':>8} {'att p99':>8} {'rcv p50':>8} {'rcv p99':>8} {'checks':>6}  "
        f"cpu s/1000 (worker, receiver, postgres, bench) | other programs' share of the CPUs"
    )
    print(header)
    print("-" * len(header))
    for phase in phases:
        latency = phase["event_to_first_attempt_ms"]
        received = phase["event_to_received_ms"]
        cpu = phase["cpu_seconds"]
        per_k = 1000 / phase["events"] if phase["events"] else 0
        wall_rate = phase["events"] / phase["wall_seconds"] if phase["wall_seconds"] else math.nan
        print(
            f"{phase['name']:<8} {phase['events']:>7} {fmt(phase['emit_per_s']):>7} "
            f"{fmt(phase['deliveries_per_s']):>8} {fmt(wall_rate):>7} "
            f"{fmt(latency.get('p50'), 1):>8} {fmt(latency.get('p99'), 1):>8} "
            f"{fmt(received.get('p50'), 1):>8} {fmt(received.get('p99'), 1):>8} "
            f"{'ok' if phase['checks'].get('all_ok') else 'FAIL':>6}  "
            + ", ".join(
                fmt(cpu.get(k, math.nan) * per_k, 2) for k in ("worker", "receiver", "postgres", "bench")
            )
            + f" | {other_share(cpu)}"
        )
    print(
        f"baseline (bare httpx, {CONCURRENCY} concurrent): {fmt(baseline['requests_per_s'])} req/s "
        f"({baseline['requests']} requests, {baseline['errors']} errors); cpu s/1000: client "
        f"{fmt(baseline['cpu_seconds']['bench'] * 1000 / baseline['requests'], 2)}, receiver "
        f"{fmt(baseline['cpu_seconds']['receiver'] * 1000 / baseline['requests'], 2)} | other programs "
        f"{other_share(baseline['cpu_seconds'])}"
    )
    sharded = result.get("baseline_sharded")
    if sharded:
        print(
            f"baseline, {sharded['clients']} httpx clients sharing {CONCURRENCY} connections "
            f"(informative): {fmt(sharded['requests_per_s'])} req/s; cpu s/1000: client "
            f"{fmt(sharded['cpu_seconds']['bench'] * 1000 / sharded['requests'], 2)}; "
            f"ratio live/this: {result.get('ratio_live_to_sharded_baseline')}"
        )
    print(f"load average at start / end: {result['loadavg_start']} / {result['loadavg_end']}")
    if result["sources_changed_during_run"]:
        print(f"WARNING: sources changed during the run: {', '.join(result['sources_changed_during_run'])}")
    for name, goal in result["goals"].items():
        print(
            f"goal {name}: {goal['value']} (target {goal['target']}) -> {'met' if goal['met'] else 'MISSED'}"
        )
    print()


# ---------------------------------------------------------------------------------------------
# The benchmark


def fake_case_data(i: int) -> dict[str, Any]:
    """The shape of `casefile.events.payloads.case_created`."""
    from casefile.clock import format_timestamp, new_id, utcnow

    return {
        "case_id": new_id("case"),
        "title": f"Benchmark v. Receiver, matter {i}",
        "case_number": f"BENCH-{i:07d}",
        "case_type": "civil",
        "jurisdiction": "US-CA",
        "client_name": "Acme Benchmarking LLC",
        "status": "open",
        "priority": "medium",
        "created_by": "usr_bench",
        "created_at": format_timestamp(utcnow()),
    }


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.temp = Path(tempfile.mkdtemp(prefix="casefile-bench-webhooks-"))
        self.data_dir = self.temp / "data"
        self.secret_key = secrets.token_urlsafe(32)
        self.receiver: subprocess.Popen[bytes] | None = None
        self.receiver_url = ""
        self.worker: subprocess.Popen[bytes] | None = None
        self.worker_pid: int | None = None  # differs from worker.pid under py-spy
        self.worker_runs = 0
        self.worker_cpu_done = 0.0  # CPU of worker processes already stopped
        self.worker_log = self.temp / "worker.log"
        self.worker_log_offset = 0
        self.profile_paths: list[Path] = []
        self.database_url: str | None = None
        self.created_database = False
        self.runtime: Any = None
        self.webhook_id = ""
        self.expected_succeeded = 0
        self.http: Any = None

    # -- setup ---------------------------------------------------------------------------

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CASEFILE_")}
        env.update(
            CASEFILE_DATA_DIR=str(self.data_dir),
            CASEFILE_SECRET_KEY=self.secret_key,
            CASEFILE_WEBHOOK_ALLOW_PRIVATE_URLS="true",
            CASEFILE_WORKER_CONCURRENCY=str(CONCURRENCY),
            CASEFILE_WORKER_PER_WEBHOOK_CONCURRENCY=str(CONCURRENCY),
            CASEFILE_LOG_LEVEL="INFO",  # nothing is logged per delivery
        )
        if self.database_url:
            env["CASEFILE_DATABASE_URL"] = self.database_url
        if self.args.redis_url:
            env["CASEFILE_REDIS_URL"] = self.args.redis_url
        if self.args.db_pool_size:
            env["CASEFILE_DB_POOL_SIZE"] = str(self.args.db_pool_size)
        return env

    def start_receiver(self) -> None:
        self.receiver = subprocess.Popen(
            die_with_parent([sys.executable, str(Path(__file__).resolve()), "--receiver"]),
            stdout=subprocess.PIPE,
            start_new_session=True,
        )
        assert self.receiver.stdout is not None
        ready, _, _ = select.select([self.receiver.stdout], [], [], 30)
        line = self.receiver.stdout.readline().decode().strip() if ready else ""
        if not line.isdigit():
            raise BenchError("the receiver did not start")
        self.receiver_url = f"http://127.0.0.1:{int(line)}"
        log(f"receiver listening on {self.receiver_url} (pid {self.receiver.pid})")

    async def prepare_database(self) -> None:
        if self.args.database == "sqlite":
            log(f"database: SQLite in {self.data_dir}")
            return
        import asyncpg

        admin = urlsplit(self.args.admin_url)
        if (admin.hostname or "") not in LOOPBACK_HOSTS:
            raise BenchError("--admin-url must point to a loopback address")
        name = self.args.db_name
        if not name.startswith("casefile_bench") or not name.replace("_", "").isalnum():
            raise BenchError("--db-name must start with casefile_bench (it is dropped)")
        connection = await asyncpg.connect(self.args.admin_url)
        try:
            await connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            await connection.execute(f'CREATE DATABASE "{name}"')
        finally:
            await connection.close()
        self.created_database = True
        self.database_url = admin._replace(path=f"/{name}").geturl()
        log(f"database: PostgreSQL {self.database_url}")

    async def drop_database(self) -> None:
        if not self.created_database:
            return
        import asyncpg

        connection = await asyncpg.connect(self.args.admin_url)
        try:
            await connection.execute(f'DROP DATABASE IF EXISTS "{self.args.db_name}" WITH (FORCE)')
        finally:
            await connection.close()
        self.created_database = False
        log(f"dropped database {self.args.db_name}")

    def migrate(self) -> None:
        casefile = Path(sys.executable).with_name("casefile")
        done = subprocess.run(
            [str(casefile), "migrate"], env=self.env(), capture_output=True, timeout=180, check=False
        )
        if done.returncode != 0:
            raise BenchError(f"casefile migrate failed:\n{done.stderr.decode(errors='replace')[-3000:]}")
        log("casefile migrate: " + done.stdout.decode().strip())

    async def open_runtime(self) -> None:
        from pydantic import SecretStr

        from casefile.auth.permissions import Principal
        from casefile.config.schemas import RetryPolicy
        from casefile.settings import Settings
        from casefile.startup import start_runtime
        from casefile.webhooks.schemas import WebhookCreate
        from casefile.webhooks.service import create_webhook

        settings = Settings(
            _env_file=None,
            data_dir=self.data_dir,
            database_url=self.database_url,
            secret_key=SecretStr(self.secret_key),
            webhook_allow_private_urls=True,
            redis_url=self.args.redis_url,
            log_level="WARNING",
        )
        self.runtime = start_runtime(settings)
        actor = Principal(kind="api_key", id="key_bench", permissions=frozenset())
        body = WebhookCreate(
            name="bench receiver",
            url=f"{self.receiver_url}/hooks/casefile",
            events=[EVENT_NAME],
            secret=WEBHOOK_SECRET,
            retry_policy=RetryPolicy(max_attempts=5, backoff_multiplier=2, initial_delay=2),
        )
        async with self.runtime.db.transaction() as session:
            webhook = await create_webhook(session, self.runtime, actor, body)
            self.webhook_id = webhook.id
        log(f"webhook {self.webhook_id} -> {body.url}")

    # -- the worker ------------------------------------------------------------------------

    def start_worker(self, profile: Path | None) -> None:
        casefile = str(Path(sys.executable).with_name("casefile"))
        command = die_with_parent([casefile, "worker"])
        if profile is not None:
            py_spy = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or shutil.which("py-spy")
            if py_spy is None:
                raise BenchError("--profile needs py-spy: .venv/bin/pip install py-spy")
            # py-spy gets the parent-death signal; the worker it starts is stopped by `cleanup`.
            spy = [py_spy, "record", "--nonblocking", "--rate", str(self.args.profile_rate)]
            spy += ["--format", "raw", "--output", str(profile), "--", casefile, "worker"]
            command = die_with_parent(spy)
        handle = self.worker_log.open("ab")
        try:
            self.worker = subprocess.Popen(
                command,
                env=self.env(),
                stdout=handle,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        finally:
            handle.close()
        self.worker_pid = self.worker.pid
        if profile is not None:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and not children_of(self.worker.pid):
                time.sleep(0.05)
            kids = children_of(self.worker.pid)
            if not kids:
                raise BenchError("py-spy did not start the worker:\n" + tail(self.worker_log))
            self.worker_pid = kids[0]
        self.worker_runs += 1
        log(f"worker started (pid {self.worker_pid}{', under py-spy' if profile else ''})")

    def worker_cpu(self) -> float:
        live = proc_cpu_seconds(self.worker_pid) if self.worker_pid and self.worker else 0.0
        return self.worker_cpu_done + live

    async def stop_worker(self) -> None:
        if self.worker is None:
            return
        used = proc_cpu_seconds(self.worker_pid) if self.worker_pid else 0.0
        await stop_process(self.worker, timeout=self.args.timeout_seconds + 10, pid=self.worker_pid)
        self.worker_cpu_done += used
        self.worker, self.worker_pid = None, None
        log("worker stopped")

    def worker_log_problems(self, keep: int = 20) -> list[str]:
        """WARNING/ERROR lines (and exception lines) the worker logged since the last call."""
        try:
            with self.worker_log.open("rb") as handle:
                handle.seek(self.worker_log_offset)
                text = handle.read().decode(errors="replace")
                self.worker_log_offset = handle.tell()
        except OSError:
            return []
        marks = (" WARNING ", " ERROR ", " CRITICAL ", "Error:", "Exception:")
        lines = [line for line in text.splitlines() if any(m in line for m in marks)]
        return lines[:keep] + ([f"... {len(lines) - keep} more"] if len(lines) > keep else [])

    def check_worker_alive(self) -> None:
        if self.worker is not None and self.worker.poll() is not None:
            raise BenchError(f"the worker exited ({self.worker.returncode}):\n{tail(self.worker_log)}")

    # -- measurements ----------------------------------------------------------------------

    def cpu_snapshot(self) -> dict[str, float]:
        postgres = self.args.database == "postgres"
        machine = machine_cpu_seconds()
        return {
            "worker": self.worker_cpu(),
            "receiver": proc_cpu_seconds(self.receiver.pid) if self.receiver else 0.0,
            "postgres": postgres_cpu_seconds(self.args.db_name) if postgres else 0.0,
            "bench": self_cpu_seconds(),
            "machine_busy": machine["busy"],
            "machine_steal": machine["steal"],
            "wall": time.perf_counter(),
        }

    @staticmethod
    def cpu_delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
        """CPU seconds per process over an interval; `other` is what the rest of the machine (other
        programs) used meanwhile, `machine_idle` what was left of the CPUs."""
        delta = {k: round(max(0.0, after[k] - before[k]), 3) for k in before}
        ours = sum(delta[k] for k in ("worker", "receiver", "postgres", "bench"))
        delta["other"] = round(max(0.0, delta["machine_busy"] - ours), 3)
        delta["machine_idle"] = round(
            max(0.0, (os.cpu_count() or 1) * delta["wall"] - delta["machine_busy"] - delta["machine_steal"]),
            3,
        )
        return delta

    async def receiver_call(self, path: str) -> dict[str, Any]:
        response = await self.http.post(f"{self.receiver_url}{path}", timeout=60)
        response.raise_for_status()
        result: dict[str, Any] = response.json()
        return result

    async def baseline(self, shards: int = 1) -> Baseline:
        """Bare httpx sending the worker's payloads (`payload_body`), each signed at send time, with
        CONCURRENCY senders: one AsyncClient with CONCURRENCY connections (the reference), or
        `shards` clients sharing them (httpcore's pool does work proportional to its size on
        every request, so smaller pools are cheaper: shows what the client library can do)."""
        import httpx

        from casefile import __version__
        from casefile.clock import new_id, utcnow
        from casefile.models import Event
        from casefile.webhooks.delivery import payload_body
        from casefile.webhooks.signing import signature_headers

        n = self.args.events
        warm = 2 * CONCURRENCY
        bodies = [
            payload_body(
                Event(id=new_id("evt"), name=EVENT_NAME, data=fake_case_data(i), occurred_at=utcnow()),
                webhook_id=self.webhook_id,
                delivery_id=new_id("delivery"),
                attempt=1,
            )
            for i in range(n + warm)
        ]
        url = f"{self.receiver_url}/hooks/casefile"
        errors = 0
        per_client = math.ceil(CONCURRENCY / shards)
        limits = httpx.Limits(max_connections=per_client, max_keepalive_connections=per_client)
        clients = [httpx.AsyncClient(limits=limits, timeout=30) for _ in range(shards)]

        async def run(indexes: Sequence[int]) -> None:
            nonlocal errors
            it = iter(indexes)

            async def sender(client: httpx.AsyncClient) -> None:
                nonlocal errors
                for i in it:  # one iterator shared by all senders
                    body = bodies[i]
                    headers = {
                        "Content-Type": "application/json",
                        "User-Agent": f"casefile-webhooks/{__version__}",
                        **signature_headers(body, (WEBHOOK_SECRET,)),
                    }
                    response = await client.post(url, content=body, headers=headers)
                    if response.status_code != 200:
                        errors += 1

            await asyncio.gather(*(sender(clients[k % shards]) for k in range(CONCURRENCY)))

        try:
            await run(range(n, n + warm))  # opens the connections
            await self.receiver_call("/__reset")
            errors = 0
            before = self.cpu_snapshot()
            start = time.perf_counter()
            await run(range(n))
            seconds = time.perf_counter() - start
            cpu = self.cpu_delta(before, self.cpu_snapshot())
        finally:
            for client in clients:
                await client.aclose()
        stats = await self.receiver_call("/__stats")
        result = Baseline(
            clients=shards,
            requests=n,
            seconds=round(seconds, 3),
            requests_per_s=round(n / seconds, 1),
            errors=errors,
            received=stats["count"],
            cpu_seconds=cpu,
        )
        log(
            f"baseline ({shards} client{'s' if shards > 1 else ''}): {result.requests_per_s:,.0f} req/s "
            f"({n} in {seconds:.2f} s, {errors} errors, {stats['count']} received)"
        )
        return result

    async def emit_batch(self, indexes: Sequence[int]) -> None:
        from casefile.events.outbox import emit

        async with self.runtime.db.transaction() as session:
            for i in indexes:
                await emit(session, EVENT_NAME, fake_case_data(i))

    async def produce_saturating(self, n: int) -> None:
        batches = [range(i, min(n, i + self.args.batch)) for i in range(0, n, self.args.batch)]
        it = iter(batches)

        async def producer() -> None:
            for batch in it:
                await self.emit_batch(batch)

        await asyncio.gather(*(producer() for _ in range(self.args.producers)))

    async def produce_paced(self, n: int, rate: float) -> None:
        start = time.perf_counter()
        for i in range(n):
            delay = start + i / rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            await self.emit_batch([i])

    async def count_statuses(self) -> dict[str, int]:
        from sqlalchemy import func, select

        from casefile.models import Delivery

        async with self.runtime.db.transaction(write=False) as session:
            rows = await session.execute(select(Delivery.status, func.count()).group_by(Delivery.status))
            return {status: count for status, count in rows.all()}

    async def wait_delivered(self, timeout: float) -> float:
        """Poll until every delivery created so far has succeeded; returns when it was seen."""
        deadline = time.monotonic() + timeout
        while True:
            statuses = await self.count_statuses()
            if statuses.get("succeeded", 0) >= self.expected_succeeded:
                return time.perf_counter()
            if statuses.get("dead"):
                raise BenchError(f"deliveries went dead: {statuses}\n{tail(self.worker_log)}")
            self.check_worker_alive()
            if time.monotonic() > deadline:
                raise BenchError(f"deliveries not done within {timeout:.0f} s: {statuses}")
            await asyncio.sleep(0.2)

    async def analyse(self, phase: PhaseResult, since: datetime, until: datetime) -> dict[str, Any]:
        """Figures of the deliveries of events that occurred in [since, until], from the database."""
        from sqlalchemy import and_, func, select

        from casefile.models import Delivery, DeliveryAttempt, Event

        window = and_(Event.occurred_at >= since, Event.occurred_at <= until)
        async with self.runtime.db.transaction(write=False) as session:
            rows = (
                await session.execute(
                    select(
                        Event.id,
                        Event.occurred_at,
                        Delivery.status,
                        Delivery.attempts_made,
                        DeliveryAttempt.started_at,
                        DeliveryAttempt.finished_at,
                        DeliveryAttempt.success,
                        DeliveryAttempt.error,
                    )
                    .join(Delivery, Delivery.event_id == Event.id)
                    .outerjoin(
                        DeliveryAttempt,
                        and_(DeliveryAttempt.delivery_id == Delivery.id, DeliveryAttempt.number == 1),
                    )
                    .where(window)
                )
            ).all()
            phase.attempts = (
                await session.scalar(
                    select(func.count())
                    .select_from(DeliveryAttempt)
                    .join(Delivery, Delivery.id == DeliveryAttempt.delivery_id)
                    .join(Event, Event.id == Delivery.event_id)
                    .where(window)
                )
            ) or 0
        phase.statuses = dict(Counter(row.status for row in rows))
        started = [r.started_at for r in rows if r.started_at is not None]
        finished = [r.finished_at for r in rows if r.finished_at is not None]
        if started and finished:
            phase.span_seconds = round((max(finished) - min(started)).total_seconds(), 3)
            phase.deliveries_per_s = round(len(rows) / phase.span_seconds, 1) if phase.span_seconds else 0
        # claim_due stamps every attempt it claims with the same `now`: one value per claim.
        claims = len(set(started))
        phase.claim_transactions = claims
        phase.deliveries_per_claim = round(len(started) / claims, 2) if claims else 0.0
        phase.event_to_first_attempt_ms = summary_ms(
            [(r.started_at - r.occurred_at).total_seconds() for r in rows if r.started_at is not None]
        )
        phase.event_to_recorded_ms = summary_ms(
            [(r.finished_at - r.occurred_at).total_seconds() for r in rows if r.finished_at is not None]
        )
        return {
            "rows": len(rows),
            "payload_ids": {"webhook_" + r.id.removeprefix("evt_"): r.occurred_at for r in rows},
            "first_attempt_failures": sum(1 for r in rows if r.success is not True),
            "first_attempt_errors": dict(
                Counter(str(r.error) for r in rows if r.success is not True).most_common(5)
            ),
        }

    def check(self, phase: PhaseResult, db: dict[str, Any], stats: dict[str, Any]) -> None:
        from casefile.webhooks import SignatureError, verify_signature

        expected: dict[str, datetime] = db["payload_ids"]
        seen: dict[str, float] = stats["first_seen"] or {}
        received = [seen[pid] - occurred.timestamp() for pid, occurred in expected.items() if pid in seen]
        phase.event_to_received_ms = summary_ms(received)
        valid = invalid = tamper_detected = 0
        for sample in stats["samples"]:
            body = base64.b64decode(sample["body"])
            try:
                verify_signature(body, sample["headers"], WEBHOOK_SECRET)
                valid += 1
            except SignatureError:
                invalid += 1
            with contextlib.suppress(SignatureError):
                verify_signature(body + b" ", sample["headers"], WEBHOOK_SECRET)
                continue
            tamper_detected += 1
        checks: dict[str, Any] = {
            "deliveries_in_db": db["rows"],
            "received_requests": stats["count"],
            "received_unique_ids": stats["unique"],
            "duplicates": stats["duplicates"],
            "duplicate_ids": stats["duplicate_ids"],
            "missing_ids": len(set(expected) - set(seen)),
            "unexpected_ids": len(set(seen) - set(expected)),
            "all_succeeded": phase.statuses == {"succeeded": phase.events},
            "first_attempt_failures": db["first_attempt_failures"],
            "first_attempt_errors": db["first_attempt_errors"],
            "attempts": phase.attempts,
            "signatures_checked": valid + invalid,
            "signatures_valid": valid,
            "tampered_bodies_rejected": tamper_detected,
        }
        checks["all_ok"] = (
            db["rows"] == phase.events
            and stats["count"] == phase.events
            and stats["unique"] == phase.events
            and stats["duplicates"] == 0
            and checks["missing_ids"] == 0
            and checks["unexpected_ids"] == 0
            and checks["all_succeeded"]
            and phase.attempts == phase.events
            and valid > 0
            and invalid == 0
            and tamper_detected == valid + invalid
        )
        phase.checks = checks

    async def phase(
        self,
        name: str,
        n: int,
        produce: Callable[[], Any],
        *,
        backlog: bool = False,
        saturating: bool = True,
        profile: Path | None = None,
    ) -> PhaseResult:
        result = PhaseResult(name=name, events=n)
        sample_every = max(1, n // SAMPLES_WANTED)
        await self.receiver_call(f"/__reset?sample_every={sample_every}")
        self.expected_succeeded += n
        since = datetime.now(UTC) - timedelta(milliseconds=1)
        if backlog:
            await self.stop_worker()
        before = self.cpu_snapshot()
        start = time.perf_counter()
        await produce()
        emitted = time.perf_counter()
        until = datetime.now(UTC) + timedelta(milliseconds=1)
        result.emit_seconds = round(emitted - start, 3)
        result.emit_per_s = round(n / (emitted - start), 1)
        if backlog:
            before = self.cpu_snapshot()
            start = time.perf_counter()
            self.start_worker(profile)
        done = await self.wait_delivered(self.args.phase_timeout)
        result.wall_seconds = round(done - start, 3)
        result.cpu_seconds = self.cpu_delta(before, self.cpu_snapshot())
        stats = await self.receiver_call("/__stats?arrivals=1")
        db = await self.analyse(result, since, until)
        self.check(result, db, stats)
        result.worker_log_problems = self.worker_log_problems()
        if backlog:
            result.notes.append("events created with no worker running; latency is queue time, not reported")
            result.event_to_first_attempt_ms = {}
            result.event_to_received_ms = {}
            result.event_to_recorded_ms = {}
        elif saturating and result.deliveries_per_s and result.emit_per_s < 1.1 * result.deliveries_per_s:
            result.notes.append("producer-bound: events were created about as fast as they were delivered")
        log(
            f"{name}: {n} events, emitted {result.emit_per_s:,.0f}/s, delivered "
            f"{result.deliveries_per_s:,.0f}/s, first attempt p50 "
            f"{result.event_to_first_attempt_ms.get('p50', math.nan)} ms, checks "
            f"{'ok' if result.checks['all_ok'] else 'FAILED'}"
        )
        return result

    async def run(self) -> dict[str, Any]:
        import httpx

        args = self.args
        busy_before = await wait_idle(args.wait_idle) if args.wait_idle else None
        started_at = datetime.now(UTC)
        load_start = loadavg()
        sources_start = source_fingerprint()
        self.http = httpx.AsyncClient()
        self.start_receiver()
        await self.prepare_database()
        await asyncio.to_thread(self.migrate)
        await self.open_runtime()
        baseline = await self.baseline()
        sharded = await self.baseline(args.baseline_shards) if args.baseline_shards > 1 else None

        stamp = started_at.strftime("%Y%m%dT%H%M%SZ")
        label = run_label(args)
        profile = RESULTS_DIR / f"webhook_delivery-{label}-{stamp}.pyspy" if args.profile else None
        self.start_worker(profile and profile.with_suffix(".pyspy-1.txt"))
        if profile:
            self.profile_paths.append(profile.with_suffix(".pyspy-1.txt"))
        phases: list[PhaseResult] = []
        warm_n = args.warmup_events
        phases.append(await self.phase("warmup", warm_n, lambda: self.produce_saturating(warm_n)))
        phases.append(await self.phase("live", args.events, lambda: self.produce_saturating(args.events)))
        live = phases[-1]
        if args.paced_events:
            rate = args.paced_rate
            if live.deliveries_per_s and rate > live.deliveries_per_s / 2:
                rate = round(live.deliveries_per_s / 2, 1)
                log(f"paced rate capped at half the live throughput: {rate}/s")
            paced = await self.phase(
                "paced",
                args.paced_events,
                lambda: self.produce_paced(args.paced_events, rate),
                saturating=False,
            )
            paced.notes.append(f"open-loop rate {rate}/s, one event per transaction")
            phases.append(paced)
        if not args.no_backlog:
            second = profile.with_suffix(".pyspy-2.txt") if profile else None
            if second:
                self.profile_paths.append(second)
            phases.append(
                await self.phase(
                    "backlog",
                    args.events,
                    lambda: self.produce_saturating(args.events),
                    backlog=True,
                    profile=second,
                )
            )
        await self.stop_worker()

        profiles = {}
        for path in self.profile_paths:
            if path.exists():
                profiles[path.name] = summarise_profile(path)
        ratio = live.deliveries_per_s / baseline.requests_per_s if baseline.requests_per_s else math.nan
        # The worker spreads its connections over 8 clients (webhooks/worker.py `HttpClients`), so the
        # like-for-like client is the sharded baseline: reported beside the goal's ratio.
        ratio_sharded = (
            round(live.deliveries_per_s / sharded.requests_per_s, 3)
            if sharded and sharded.requests_per_s
            else None
        )
        main_latency = next((p for p in phases if p.name == "paced"), live).event_to_first_attempt_ms
        goals = {
            "live deliveries/s": {
                "value": live.deliveries_per_s,
                "target": f">= {GOAL_DELIVERIES_PER_S:,.0f}",
                "met": live.deliveries_per_s >= GOAL_DELIVERIES_PER_S,
            },
            "ratio live/baseline": {
                "value": round(ratio, 3),
                "target": f">= {GOAL_RATIO}",
                "met": ratio >= GOAL_RATIO,
            },
            "p50 event->first attempt (paced)": {
                "value": main_latency.get("p50"),
                "target": f"< {GOAL_P50_MS:g} ms",
                "met": (main_latency.get("p50") or math.inf) < GOAL_P50_MS,
            },
        }
        from importlib.metadata import version

        return {
            "benchmark": "webhook_delivery",
            "started_at": started_at.isoformat(timespec="seconds"),
            "loadavg_start": load_start,
            "loadavg_end": loadavg(),
            "machine_busy_before": busy_before,
            "sources": sources_start,
            "sources_changed_during_run": sorted(
                k for k, v in source_fingerprint().items() if sources_start.get(k) != v
            ),
            "database": args.database,
            "redis": bool(args.redis_url),
            "machine": {
                "cpus": os.cpu_count(),
                "python": platform.python_version(),
                "platform": platform.platform(),
                "casefile": version("casefile"),
                "httpx": version("httpx"),
                "sqlalchemy": version("sqlalchemy"),
            },
            "settings": {
                "worker_concurrency": CONCURRENCY,
                "worker_per_webhook_concurrency": CONCURRENCY,
                "db_pool_size": args.db_pool_size or "default (20)",
                "claim_batch": 50,
                "worker_http_clients": 8,
                "producers": args.producers,
                "events_per_transaction": args.batch,
                "baseline_concurrency": CONCURRENCY,
                "profiled": bool(args.profile),
            },
            "definitions": {
                "deliveries_per_s": "deliveries / (first attempt started_at -> last attempt finished_at)",
                "wall": "first emit (backlog: worker start) -> all succeeded seen by 0.2 s polling",
                "event_to_first_attempt": "delivery_attempts.started_at (number 1) - events.occurred_at",
                "event_to_received": "receiver arrival time - events.occurred_at",
                "event_to_recorded": "delivery_attempts.finished_at (number 1) - events.occurred_at",
            },
            "baseline": asdict(baseline),
            "baseline_sharded": asdict(sharded) if sharded else None,
            "ratio_live_to_sharded_baseline": ratio_sharded,
            "phases": [asdict(p) for p in phases],
            "goals": goals,
            "profiles": profiles,
        }

    async def cleanup(self) -> None:
        with contextlib.suppress(Exception):
            await self.stop_worker()
        with contextlib.suppress(Exception):
            await stop_process(self.receiver, timeout=5)
        if self.http is not None:
            with contextlib.suppress(Exception):
                await self.http.aclose()
        if self.runtime is not None:
            with contextlib.suppress(Exception):
                await self.runtime.close()
        try:
            await asyncio.wait_for(self.drop_database(), 60)
        except Exception as exc:
            log(f"could not drop {self.args.db_name}: {exc}")
        if self.args.keep_temp:
            log(f"kept {self.temp}")
        else:
            shutil.rmtree(self.temp, ignore_errors=True)


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    bench = Bench(args)
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()
    terminated: list[int] = []

    def on_signal(signum: int) -> None:
        terminated.append(signum)
        task.cancel()

    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, on_signal, signum)
    try:
        async with asyncio.timeout(args.deadline_minutes * 60):
            return await bench.run()
    except TimeoutError as exc:
        raise BenchError(f"global deadline of {args.deadline_minutes} min reached") from exc
    except asyncio.CancelledError as exc:
        if terminated:
            raise BenchError(f"stopped by signal {terminated[0]}") from exc
        raise
    except BaseException:
        if bench.worker_log.exists():
            log("worker log tail:\n" + tail(bench.worker_log))
        raise
    finally:
        await asyncio.shield(bench.cleanup())


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--receiver", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--summarise-profile", type=Path, metavar="RAW", help="only print the summary of a py-spy raw file"
    )
    parser.add_argument("--database", choices=("postgres", "sqlite"), default="postgres")
    parser.add_argument("--admin-url", default=DEFAULT_ADMIN_URL, help="PostgreSQL maintenance database")
    parser.add_argument("--db-name", default=DEFAULT_DB_NAME, help="created and dropped (casefile_bench*)")
    parser.add_argument("--redis-url", default=None, help="also wake the worker through Redis")
    parser.add_argument("--events", type=int, default=10_000, help="live, backlog and baseline size")
    parser.add_argument("--warmup-events", type=int, default=300)
    parser.add_argument("--paced-events", type=int, default=1000, help="0 skips the paced phase")
    parser.add_argument("--paced-rate", type=float, default=200.0, help="events/s in the paced phase")
    parser.add_argument("--no-backlog", action="store_true", help="skip the backlog (drain) phase")
    parser.add_argument(
        "--baseline-shards", type=int, default=8, help="also a baseline with N clients (1 or 0: skip)"
    )
    parser.add_argument("--batch", type=int, default=10, help="events per producer transaction")
    parser.add_argument("--producers", type=int, default=2, help="concurrent producer transactions")
    parser.add_argument("--db-pool-size", type=int, default=None, help="CASEFILE_DB_POOL_SIZE")
    parser.add_argument("--timeout-seconds", type=float, default=30, help="worker drain on stop")
    parser.add_argument("--phase-timeout", type=float, default=300, help="max wait for one phase")
    parser.add_argument("--deadline-minutes", type=float, default=15)
    parser.add_argument("--profile", action="store_true", help="run the worker under py-spy")
    parser.add_argument("--profile-rate", type=int, default=100, help="py-spy samples/s")
    parser.add_argument(
        "--wait-idle", type=float, default=0, help="wait up to this many s for a quiet machine first"
    )
    parser.add_argument("--keep-temp", action="store_true")
    parser.add_argument("--no-write", action="store_true", help="do not write the JSON file")
    args = smoke.parse_args(
        parser,
        argv,
        database="sqlite",
        events=20,
        warmup_events=5,
        paced_events=0,
        no_backlog=True,
        phase_timeout=60,
        deadline_minutes=3,
        no_write=True,
    )
    if not args.receiver and min(args.events, args.batch, args.producers) < 1:
        parser.error("--events, --batch and --producers must be positive")
    return args


def run_label(args: argparse.Namespace) -> str:
    """`<db>[-redis][-profiled]`: part of the result file names."""
    return str(args.database) + ("-redis" if args.redis_url else "") + ("-profiled" if args.profile else "")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.receiver:
        asyncio.run(receiver_main())
        return 0
    if args.summarise_profile:
        print(json.dumps(summarise_profile(args.summarise_profile), indent=1))
        return 0
    try:
        result = asyncio.run(main_async(args))
    except BenchError as exc:
        log(f"FAILED: {exc}")
        return 1
    print_table(result)
    if not args.no_write:
        RESULTS_DIR.mkdir(parents=True, exist_ok=True)
        label = run_label(args)
        stamp = datetime.fromisoformat(result["started_at"]).strftime("%Y%m%dT%H%M%SZ")
        path = RESULTS_DIR / f"webhook_delivery-{label}-{stamp}.json"
        path.write_text(json.dumps(result, indent=2, default=str) + "\n")
        log(f"results written to {path.relative_to(ROOT)}")
    checks_ok = all(p["checks"].get("all_ok") for p in result["phases"])
    return 0 if checks_ok else 2


if __name__ == "__main__":
    sys.exit(main())
