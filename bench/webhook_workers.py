"""Webhook deliveries/s with N `casefile worker` processes on PostgreSQL, beside a bare httpx client
measured in the same run (issue 16, point 6: >= 1,000 deliveries/s, each worker >= 0.5 x bare).

What it does (see the `webhook_workers.py` section of docs/research/bench-notes-2026-11.md):

1. starts a receiver in its own process (this file with `--receiver`): HTTP/1.1 keep-alive on raw
   asyncio protocols under uvloop, answering `200 ok` at once; it counts requests per payload
   (`path` + payload `id`, duplicates counted) and per client connection (the peer's port, which
   this script maps to the worker process that owns the socket), and keeps a sample of requests
   for signature checks. Its CPU per request is measured in every phase: its ceiling is 1 / that;
2. creates a fresh PostgreSQL database (`casefile_bench_workers`, dropped at the end), migrates it
   and registers `--webhooks` webhooks (default 8, `/hooks/0` ... on the receiver) through the
   service layer, with `CASEFILE_WEBHOOK_ALLOW_PRIVATE_URLS=true` (loopback: this bench only);
3. for every `--code` variant (default: this tree's `src`; `--code before=/path/to/src` runs an
   older tree's worker in the same run, interleaved) and every `--rounds`:
   - baseline: a bare `httpx.AsyncClient` (one client, `--concurrency` connections and senders,
     uvloop, its own process) POSTs the same kind of bodies (`payload_body`), each signed at send
     time with `signature_headers` as the worker does, to the same receiver: requests/s and CPU
     per request; and `--baseline-clients` clients sharing those connections (like the worker's);
   - starts N `casefile worker` processes (`CASEFILE_WORKER_CONCURRENCY=--concurrency`), warms
     them up, queues `--deliveries` deliveries through `casefile.events.outbox.emit` (held back
     with a future `next_attempt_at` in their own transaction, so the workers stay idle), then
     makes them all due at once with a NOTIFY and waits until every one has succeeded;
   - deliveries/s overall = deliveries / (release -> last attempt finished), per worker = what
     the receiver got on that worker's connections / the same time; CPU per delivery of the
     workers, PostgreSQL's backends and the receiver; other programs' share of the CPUs;
   - checks: every (webhook, payload id) received exactly once, every delivery succeeded at
     attempt 1, sampled signatures verify (and a tampered body does not);
4. prints a table and writes `bench/results/webhook_workers-<timestamp>.json`.

Everything is bounded by `--deadline-minutes`; subprocesses get SIGTERM on every exit path (and
if this process dies: `setpriv --pdeathsig`). All traffic stays on the loopback.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import math
import os
import resource
import secrets
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

import smoke

sys.path.insert(0, str(Path(__file__).resolve().parent))
import webhook_delivery as wd

ROOT = wd.ROOT
SELF = Path(__file__).resolve()
DEFAULT_DB_NAME = "casefile_bench_workers"
HELD = datetime(2100, 1, 1, tzinfo=UTC)  # queued deliveries wait here until released
HELD_NAIVE = HELD.replace(tzinfo=None)  # as stored (naive UTC), for raw SQL
SECRET = "whsec_bench_" + "w" * 24
SAMPLES = 100
log = wd.log


# ---------------------------------------------------------------------------------------------
# The receiver (`--receiver`): its own process, uvloop.

OK = b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\nok"


class Received:
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.count = 0
        self.seen: set[bytes] = set()
        self.duplicates = 0
        self.by_peer: Counter[int] = Counter()
        self.samples: list[dict[str, Any]] = []


class Receiver(asyncio.Protocol):
    """HTTP/1.1 with keep-alive; requests carry Content-Length (httpx sends it)."""

    def __init__(self, state: Received) -> None:
        self.state = state
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None
        self.peer = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transport is not an asyncio.Transport, though it has every method used here.
        self.transport = cast(asyncio.Transport, transport)
        self.peer = transport.get_extra_info("peername")[1]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while (end := self.buffer.find(b"\r\n\r\n")) >= 0:
            head = bytes(self.buffer[:end])
            mark = head.lower().find(b"\r\ncontent-length:")
            length = 0
            if mark >= 0:
                stop = head.find(b"\r\n", mark + 2)
                length = int(head[mark + 17 : stop if stop >= 0 else len(head)])
            total = end + 4 + length
            if len(self.buffer) < total:
                return
            body = bytes(self.buffer[end + 4 : total])
            del self.buffer[:total]
            self.request(head, body)

    def request(self, head: bytes, body: bytes) -> None:
        assert self.transport is not None
        target = head.split(b" ", 2)[1]
        if target.startswith(b"/__"):
            if target == b"/__reset":
                self.state.reset()
                answer = b"{}"
            else:
                s = self.state
                answer = json.dumps(
                    {
                        "count": s.count,
                        "unique": len(s.seen),
                        "duplicates": s.duplicates,
                        "by_peer": s.by_peer,
                        "samples": s.samples,
                        "cpu_seconds": wd.self_cpu_seconds(),
                    }
                ).encode()
            self.transport.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
                % (len(answer), answer)
            )
            return
        state = self.state
        state.count += 1
        state.by_peer[self.peer] += 1
        start = body.find(b'"id":"') + 6
        key = target + b" " + body[start : body.find(b'"', start)]
        if key in state.seen:
            state.duplicates += 1
        else:
            state.seen.add(key)
        if state.count % 97 == 0 and len(state.samples) < SAMPLES:
            headers = dict(
                line.decode("latin-1").split(":", 1) for line in head.split(b"\r\n")[1:] if b":" in line
            )
            sample = {k.strip(): v.strip() for k, v in headers.items()}
            state.samples.append({"headers": sample, "body": base64.b64encode(body).decode()})
        self.transport.write(OK)


async def receiver_main() -> None:
    loop = asyncio.get_running_loop()
    state = Received()
    server = await loop.create_server(lambda: Receiver(state), "127.0.0.1", 0, backlog=2048)
    print(server.sockets[0].getsockname()[1], flush=True)
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    async with server:
        await stop.wait()


# ---------------------------------------------------------------------------------------------
# The bare client (`--baseline`): its own process, uvloop.


async def baseline_main(spec: dict[str, Any]) -> None:
    """`spec`: urls, webhook_ids, requests, concurrency, clients. Prints requests/s and CPU."""
    import httpx

    from casefile import __version__
    from casefile.clock import new_id, utcnow
    from casefile.models import Event
    from casefile.webhooks.delivery import payload_body
    from casefile.webhooks.signing import signature_headers

    n, concurrency, shards = spec["requests"], spec["concurrency"], spec["clients"]
    urls, hooks = spec["urls"], spec["webhook_ids"]
    warm = 2 * concurrency
    jobs = []
    for i in range(n + warm):
        event = Event(id=new_id("evt"), name="case.created", data=wd.fake_case_data(i), occurred_at=utcnow())
        k = i % len(urls)
        body = payload_body(event, webhook_id=hooks[k], delivery_id=new_id("delivery"), attempt=1)
        jobs.append((urls[k], body, event.payload_id))
    per_client = math.ceil(concurrency / shards)
    limits = httpx.Limits(max_connections=per_client, max_keepalive_connections=per_client)
    clients = [httpx.AsyncClient(limits=limits, timeout=30) for _ in range(shards)]
    errors = 0

    async def run(indexes: range) -> None:
        it = iter(indexes)

        async def sender(client: httpx.AsyncClient) -> None:
            nonlocal errors
            for i in it:  # one iterator shared by all senders
                url, body, message_id = jobs[i]
                headers = {
                    "Content-Type": "application/json",
                    "User-Agent": f"casefile-webhooks/{__version__}",
                    **signature_headers(body, (SECRET,), message_id=message_id),
                }
                response = await client.post(url, content=body, headers=headers)
                errors += response.status_code != 200

        await asyncio.gather(*(sender(clients[k % shards]) for k in range(concurrency)))

    await run(range(n, n + warm))  # opens the connections
    errors = 0
    cpu, start = wd.self_cpu_seconds(), time.perf_counter()
    await run(range(n))
    seconds, cpu = time.perf_counter() - start, wd.self_cpu_seconds() - cpu
    for client in clients:
        await client.aclose()
    print(json.dumps({"requests": n, "seconds": seconds, "cpu_seconds": cpu, "errors": errors}), flush=True)


# ---------------------------------------------------------------------------------------------
# Which worker process owns which connection to the receiver.


def socket_inodes(pid: int) -> set[str]:
    inodes = set()
    with contextlib.suppress(OSError):
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
    return inodes


def local_ports_to(pid: int, remote_port: int) -> set[int]:
    """Local ports of `pid`'s TCP connections to 127.0.0.1:`remote_port`."""
    inodes = socket_inodes(pid)
    ports = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote, inode = fields[1], fields[2], fields[9]
        if inode in inodes and int(remote.split(":")[1], 16) == remote_port:
            ports.add(int(local.split(":")[1], 16))
    return ports


# ---------------------------------------------------------------------------------------------
# The run


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.temp = Path(tempfile.mkdtemp(prefix="casefile-bench-workers-"))
        self.secret_key = secrets.token_urlsafe(32)
        self.receiver: subprocess.Popen[bytes] | None = None
        self.receiver_port = 0
        self.workers: list[subprocess.Popen[bytes]] = []
        self.worker_pids: list[int] = []
        self.profiles: list[Path] = []
        admin = urlsplit(args.admin_url)
        self.database_url = admin._replace(path=f"/{args.db_name}").geturl()
        self.created = False
        self.runtime: Any = None
        self.webhook_ids: list[str] = []
        self.http: Any = None
        self.pg: Any = None  # the bench's own connection (asyncpg)
        self.pg_pid = 0
        self.polls = 0

    # -- processes -------------------------------------------------------------------------

    def env(self, src: Path | None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CASEFILE_")}
        env.update(
            CASEFILE_DATA_DIR=str(self.temp / "data"),
            CASEFILE_DATABASE_URL=self.database_url,
            CASEFILE_SECRET_KEY=self.secret_key,
            CASEFILE_WEBHOOK_ALLOW_PRIVATE_URLS="true",  # the receiver is on the loopback
            CASEFILE_WORKER_CONCURRENCY=str(self.args.concurrency),
            CASEFILE_WORKER_PER_WEBHOOK_CONCURRENCY=str(
                math.ceil(self.args.concurrency / self.args.webhooks)
            ),
            CASEFILE_LOG_LEVEL="INFO",
        )
        if src is not None:  # an older tree's code, ahead of this venv's editable install
            env["PYTHONPATH"] = str(src)
        return env

    def start_receiver(self) -> None:
        self.receiver = subprocess.Popen(
            wd.die_with_parent([sys.executable, str(Path(__file__).resolve()), "--receiver"]),
            stdout=subprocess.PIPE,
            start_new_session=True,
        )
        assert self.receiver.stdout is not None
        ready, _, _ = select.select([self.receiver.stdout], [], [], 30)
        line = self.receiver.stdout.readline().decode().strip() if ready else ""
        if not line.isdigit():
            raise wd.BenchError("the receiver did not start")
        self.receiver_port = int(line)
        log(f"receiver on 127.0.0.1:{self.receiver_port} (pid {self.receiver.pid})")

    def worker_log(self, index: int) -> Path:
        return self.temp / f"worker-{index}.log"

    async def start_workers(self, n: int, src: Path | None, profile: bool) -> None:
        casefile = str(Path(sys.executable).with_name("casefile"))
        for index in range(n):
            command = [casefile, "worker"]
            if profile and index == 0:
                spy = str(Path(sys.executable).with_name("py-spy"))
                path = self.temp / f"profile-{len(self.profiles)}.txt"
                self.profiles.append(path)
                command = [spy, "record", "--nonblocking", "--rate", "200", "--format", "raw"]
                command += ["--output", str(path), "--", casefile, "worker"]
            with self.worker_log(index).open("ab") as handle:
                proc = subprocess.Popen(  # noqa: ASYNC220 (starting it takes no time)
                    wd.die_with_parent(command),
                    env=self.env(src),
                    stdout=handle,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            self.workers.append(proc)
        deadline = time.monotonic() + 120
        for index, proc in enumerate(self.workers):
            while "workers started" not in wd.tail(self.worker_log(index), 50):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise wd.BenchError(f"worker {index} did not start:\n{wd.tail(self.worker_log(index))}")
                await asyncio.sleep(0.1)
        self.worker_pids = [
            (wd.children_of(p.pid) or [p.pid])[0] if profile and i == 0 else p.pid
            for i, p in enumerate(self.workers)
        ]
        log(
            f"{n} worker(s) started: pids {self.worker_pids}"
            + (" (the first under py-spy)" if profile else "")
        )

    async def stop_workers(self) -> None:
        await asyncio.gather(
            *(
                wd.stop_process(proc, timeout=40, pid=pid)
                for proc, pid in zip(
                    self.workers, self.worker_pids or [p.pid for p in self.workers], strict=False
                )
            )
        )
        problems = []
        for index in range(len(self.workers)):
            text = wd.tail(self.worker_log(index), 400)
            problems += [line for line in text.splitlines() if " WARNING " in line or " ERROR " in line]
            self.worker_log(index).unlink(missing_ok=True)
        self.workers, self.worker_pids = [], []
        if problems:
            log("worker warnings/errors:\n" + "\n".join(problems[:20]))

    # -- database --------------------------------------------------------------------------

    async def prepare_database(self) -> None:
        import asyncpg

        admin = urlsplit(self.args.admin_url)
        if admin.hostname not in wd.LOOPBACK_HOSTS:
            raise wd.BenchError("--admin-url must point to a loopback address")
        name = self.args.db_name
        if not name.startswith("casefile_bench") or not name.replace("_", "").isalnum():
            raise wd.BenchError("--db-name must start with casefile_bench (it is dropped)")
        connection = await asyncpg.connect(self.args.admin_url)
        try:
            await connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            await connection.execute(f'CREATE DATABASE "{name}"')
        finally:
            await connection.close()
        self.created = True
        casefile = Path(sys.executable).with_name("casefile")
        done = subprocess.run(  # noqa: ASYNC221 (before anything is measured)
            [str(casefile), "migrate"], env=self.env(None), capture_output=True, timeout=180, check=False
        )
        if done.returncode != 0:
            raise wd.BenchError(f"casefile migrate failed:\n{done.stderr.decode(errors='replace')[-3000:]}")
        log(f"database {self.database_url} created and migrated")

    async def drop_database(self) -> None:
        if not self.created:
            return
        import asyncpg

        connection = await asyncpg.connect(self.args.admin_url)
        try:
            await connection.execute(f'DROP DATABASE IF EXISTS "{self.args.db_name}" WITH (FORCE)')
        finally:
            await connection.close()
        self.created = False

    async def register_webhooks(self) -> None:
        from pydantic import SecretStr

        from casefile.auth.permissions import Principal
        from casefile.config.schemas import RetryPolicy
        from casefile.settings import Settings
        from casefile.startup import start_runtime
        from casefile.webhooks.schemas import WebhookCreate
        from casefile.webhooks.service import create_webhook

        settings = Settings(
            _env_file=None,
            data_dir=self.temp / "data",
            database_url=self.database_url,
            secret_key=SecretStr(self.secret_key),
            webhook_allow_private_urls=True,
            log_level="WARNING",
        )
        self.runtime = start_runtime(settings)
        actor = Principal(kind="api_key", id="key_bench", permissions=frozenset())
        async with self.runtime.db.transaction() as session:
            for i in range(self.args.webhooks):
                body = WebhookCreate(
                    name=f"bench receiver {i}",
                    url=f"http://127.0.0.1:{self.receiver_port}/hooks/{i}",
                    events=["case.created"],
                    secret=SECRET,
                    retry_policy=RetryPolicy(max_attempts=5, backoff_multiplier=2, initial_delay=2),
                )
                self.webhook_ids.append((await create_webhook(session, self.runtime, actor, body)).id)
        log(f"{self.args.webhooks} webhooks registered")

    async def queue(self, events: int, *, held: bool) -> int:
        """`events` events through the outbox (one delivery per webhook each), 50 per transaction;
        `held`: not due until `release` (set in the same transaction, so no worker sees them due)."""
        from sqlalchemy import update

        from casefile.events.outbox import emit, write_outbox
        from casefile.models import Delivery

        for start in range(0, events, 50):
            async with self.runtime.db.transaction() as session:
                ids = [
                    await emit(session, "case.created", wd.fake_case_data(i))
                    for i in range(start, min(events, start + 50))
                ]
                await write_outbox(session)  # the deliveries exist from here (they are held below)
                if held:
                    await session.execute(
                        update(Delivery).where(Delivery.event_id.in_(ids)).values(next_attempt_at=HELD)
                    )
        return events * len(self.webhook_ids)

    async def sql(self, statement: str, *params: Any) -> list[Any]:
        """On the bench's one connection (its backend's CPU is not counted as PostgreSQL's)."""
        if self.pg is None:
            import asyncpg

            self.pg = await asyncpg.connect(self.database_url)
            self.pg_pid = self.pg.get_server_pid()
        return list(await self.pg.fetch(statement, *params))

    async def release(self) -> None:
        # Due in the order they were created, a microsecond apart, as deliveries created one after
        # the other are (one timestamp for all would order them by webhook in the claim's index:
        # the per-webhook cap would then let a claim take only one webhook's share).
        await self.sql(
            "WITH queued AS (SELECT id, row_number() OVER (ORDER BY created_at, id) AS n FROM deliveries "
            "WHERE next_attempt_at = $1), due AS (UPDATE deliveries SET next_attempt_at = "
            "now() AT TIME ZONE 'UTC' - interval '1 second' + queued.n * interval '1 microsecond' "
            "FROM queued WHERE deliveries.id = queued.id RETURNING 1) "
            "SELECT pg_notify('casefile_deliveries', '')",
            HELD_NAIVE,
        )

    async def commits(self) -> int:
        rows = await self.sql(
            "SELECT xact_commit FROM pg_stat_database WHERE datname = $1", self.args.db_name
        )
        return int(rows[0][0])

    async def wait_delivered(self, timeout: float) -> float:
        """Until no delivery is waiting (cheap: the partial index of due rows), every 0.1 s."""
        deadline = time.monotonic() + timeout
        while True:
            rows = await self.sql(
                "SELECT count(*) FILTER (WHERE status <> 'dead'), count(*) FILTER (WHERE status = 'dead') "
                "FROM deliveries WHERE status IN ('pending', 'retrying', 'dead')"
            )
            waiting, dead = rows[0]
            self.polls += 1
            if dead:
                raise wd.BenchError(f"{dead} deliveries went dead")
            if not waiting:
                return time.perf_counter()
            statuses = {"waiting": waiting}
            for index, proc in enumerate(self.workers):
                if proc.poll() is not None:
                    raise wd.BenchError(f"worker {index} exited:\n{wd.tail(self.worker_log(index))}")
            if time.monotonic() > deadline:
                raise wd.BenchError(f"not delivered within {timeout:.0f} s: {statuses}")
            await asyncio.sleep(0.1)

    # -- measurements ----------------------------------------------------------------------

    async def receiver_call(self, path: str) -> dict[str, Any]:
        response = await self.http.post(f"http://127.0.0.1:{self.receiver_port}{path}", timeout=60)
        response.raise_for_status()
        result: dict[str, Any] = response.json()
        return result

    def cpu(self) -> dict[str, float]:
        machine = wd.machine_cpu_seconds()
        return {
            "workers": sum(wd.proc_cpu_seconds(pid) for pid in self.worker_pids),
            "receiver": wd.proc_cpu_seconds(self.receiver.pid) if self.receiver else 0.0,
            "postgres": wd.postgres_cpu_seconds(self.args.db_name) - wd.proc_cpu_seconds(self.pg_pid),
            "bench": wd.self_cpu_seconds() + children_cpu(),
            "machine_busy": machine["busy"],
            "wall": time.perf_counter(),
        }

    @staticmethod
    def delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
        d = {k: max(0.0, after[k] - before[k]) for k in before}
        d["other"] = max(0.0, d["machine_busy"] - d["workers"] - d["receiver"] - d["postgres"] - d["bench"])
        d["other_share"] = d["other"] / ((os.cpu_count() or 1) * d["wall"]) if d["wall"] else 0.0
        return {k: round(v, 4) for k, v in d.items()}

    async def baseline(self, clients: int) -> dict[str, Any]:
        spec = {
            "urls": [
                f"http://127.0.0.1:{self.receiver_port}/hooks/{i}" for i in range(len(self.webhook_ids))
            ],
            "webhook_ids": self.webhook_ids,
            "requests": self.args.baseline_requests,
            "concurrency": self.args.concurrency,
            "clients": clients,
        }
        await self.receiver_call("/__reset")
        receiver_before = wd.proc_cpu_seconds(self.receiver.pid) if self.receiver else 0.0
        command = [sys.executable, str(SELF), "--baseline", json.dumps(spec)]
        proc = await asyncio.create_subprocess_exec(*command, stdout=subprocess.PIPE)
        out, _ = await asyncio.wait_for(proc.communicate(), timeout=300)
        result: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
        receiver_cpu = (wd.proc_cpu_seconds(self.receiver.pid) if self.receiver else 0.0) - receiver_before
        n = result["requests"]
        figures = {
            "clients": clients,
            "requests_per_s": round(n / result["seconds"], 1),
            "cpu_ms_per_request": round(1000 * result["cpu_seconds"] / n, 3),
            "receiver_cpu_ms_per_request": round(1000 * receiver_cpu / (n + 2 * self.args.concurrency), 3),
            "errors": result["errors"],
        }
        log(f"bare httpx ({clients} client(s), {self.args.concurrency} connections): {figures}")
        return figures

    async def deliveries_phase(self, n_workers: int) -> dict[str, Any]:
        """Queue, release, wait; per-worker counts from the receiver's connections."""
        events = math.ceil(self.args.deliveries / len(self.webhook_ids))
        t = time.perf_counter()
        queued = await self.queue(events, held=True)
        log(f"queued {queued} deliveries (held) in {time.perf_counter() - t:.1f} s")
        await self.receiver_call("/__reset")
        await asyncio.sleep(1.5)  # backends report their transaction counts within a second
        commits, polls = await self.commits(), self.polls
        before = self.cpu()
        released_at = datetime.now(UTC).replace(tzinfo=None)  # the columns hold naive UTC
        start = time.perf_counter()
        await self.release()
        end = await self.wait_delivered(self.args.phase_timeout)
        cpu = self.delta(before, self.cpu())
        await asyncio.sleep(1.5)
        commits = await self.commits() - commits - (self.polls - polls) - 2  # not the bench's own
        stats = await self.receiver_call("/__stats")
        ports = {pid: local_ports_to(pid, self.receiver_port) for pid in self.worker_pids}
        by_peer = {int(k): v for k, v in stats["by_peer"].items()}
        per_worker = [sum(by_peer.get(p, 0) for p in ports[pid]) for pid in self.worker_pids]
        rows = await self.sql(
            "SELECT min(a.started_at), max(a.finished_at), count(*), count(*) FILTER (WHERE a.number = 1 "
            "AND a.success), count(DISTINCT a.delivery_id) FROM delivery_attempts a JOIN deliveries d "
            "ON d.id = a.delivery_id WHERE a.started_at >= $1",
            released_at,
        )
        first, last, attempts, first_ok, _distinct = rows[0]
        db_seconds = (last - first).total_seconds() if first and last else float("nan")
        seconds = end - start
        rate = queued / db_seconds
        result = {
            "workers": n_workers,
            "deliveries": queued,
            "received": stats["count"],
            "duplicates": stats["duplicates"],
            "unique": stats["unique"],
            "attempts": attempts,
            "succeeded_at_attempt_1": first_ok,
            "seconds_first_attempt_to_last": round(db_seconds, 3),
            "seconds_release_to_all_succeeded": round(seconds, 3),
            "deliveries_per_s": round(rate, 1),
            "per_worker_received": per_worker,
            "per_worker_per_s": [round(c / db_seconds, 1) for c in per_worker],
            "unattributed": stats["count"] - sum(per_worker),
            "cpu_seconds": cpu,
            "worker_cpu_ms_per_delivery": round(1000 * cpu["workers"] / queued, 3),
            "postgres_cpu_ms_per_delivery": round(1000 * cpu["postgres"] / queued, 3),
            "transactions_per_100_deliveries": round(100 * commits / queued, 1),
            "receiver_cpu_ms_per_delivery": round(1000 * cpu["receiver"] / queued, 3),
            "samples": stats["samples"],
        }
        log(
            f"{n_workers} worker(s): {rate:,.0f} deliveries/s ({queued} in {db_seconds:.2f} s), per worker "
            f"{result['per_worker_per_s']}, worker CPU {result['worker_cpu_ms_per_delivery']} ms/delivery, "
            f"PostgreSQL {result['postgres_cpu_ms_per_delivery']} ms, "
            f"other programs {100 * cpu['other_share']:.0f} %"
        )
        return result

    def check(self, phase: dict[str, Any]) -> dict[str, Any]:
        from casefile.webhooks.signing import verify_signature

        valid = tampered_refused = 0
        for sample in phase.pop("samples"):
            body = base64.b64decode(sample["body"])
            try:
                verify_signature(body, sample["headers"], SECRET)
                valid += 1
            except Exception:
                continue
            try:
                verify_signature(body + b" ", sample["headers"], SECRET)
            except Exception:
                tampered_refused += 1
        n = phase["deliveries"]
        checks = {
            "received_all": phase["received"] == n and phase["unique"] == n,
            "no_duplicates": phase["duplicates"] == 0,
            "all_succeeded_at_attempt_1": phase["succeeded_at_attempt_1"] == n and phase["attempts"] == n,
            "signatures_valid": f"{valid} valid, {tampered_refused} tampered refused",
        }
        checks["all_ok"] = bool(
            checks["received_all"]
            and checks["no_duplicates"]
            and checks["all_succeeded_at_attempt_1"]
            and valid > 0
            and valid == tampered_refused
        )
        return checks

    async def run(self) -> dict[str, Any]:
        import httpx

        args = self.args
        started = datetime.now(UTC)
        if args.wait_idle:
            await wd.wait_idle(args.wait_idle)
        self.http = httpx.AsyncClient()
        self.start_receiver()
        await self.prepare_database()
        await self.register_webhooks()
        runs: list[dict[str, Any]] = []
        for round_number in range(args.rounds):
            for label, src in args.code:
                for n_workers in args.workers:
                    log(
                        f"round {round_number + 1}, code {label!r}, {n_workers} worker(s), "
                        f"load {wd.loadavg()}"
                    )
                    run: dict[str, Any] = {
                        "round": round_number + 1,
                        "code": label,
                        "load_before": wd.loadavg(),
                    }
                    run["bare"] = await self.baseline(1)
                    if args.baseline_clients > 1:
                        run["bare_sharded"] = await self.baseline(args.baseline_clients)
                    await self.start_workers(n_workers, src, args.profile)
                    try:
                        await self.queue(args.warmup_events, held=False)
                        await self.wait_delivered(args.phase_timeout)
                        phase = await self.deliveries_phase(n_workers)
                    finally:
                        await self.stop_workers()
                    phase["checks"] = self.check(phase)
                    bare = run["bare"]["requests_per_s"]
                    phase["ratio_per_worker_to_bare"] = [
                        round(r / bare, 2) for r in phase["per_worker_per_s"]
                    ]
                    run["bare_after"] = await self.baseline(1)
                    bare_mean = (bare + run["bare_after"]["requests_per_s"]) / 2
                    phase["ratio_mean_worker_to_bare_mean"] = round(
                        phase["deliveries_per_s"] / n_workers / bare_mean, 2
                    )
                    run["load_after"] = wd.loadavg()
                    runs.append(run | {"phase": phase})
        profiles = [wd.summarise_profile(p) for p in self.profiles if p.exists()]
        return {
            "started_at": started.isoformat(),
            "args": {
                k: (v if k != "code" else [[lbl, str(s)] for lbl, s in v]) for k, v in vars(args).items()
            },
            "runs": runs,
            "profiles": profiles,
        }

    async def cleanup(self) -> None:
        with contextlib.suppress(Exception):
            await self.stop_workers()
        await wd.stop_process(self.receiver)
        if self.runtime is not None:
            with contextlib.suppress(Exception):
                await self.runtime.close()
        if self.http is not None:
            await self.http.aclose()
        if self.pg is not None:
            with contextlib.suppress(Exception):
                await self.pg.close()
        with contextlib.suppress(Exception):
            await self.drop_database()
        if not self.args.keep_temp:
            import shutil

            shutil.rmtree(self.temp, ignore_errors=True)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # the baseline processes, once finished
    return usage.ru_utime + usage.ru_stime


def print_table(result: dict[str, Any]) -> None:
    print()
    header = (
        f"{'round':>5} {'code':>8} {'N':>2} {'bare req/s':>11} {'bare ms':>8} {'deliv/s':>8} "
        f"{'per worker /s':>22} "
        f"{'ratio':>12} {'wrk ms':>7} {'pg ms':>6} {'rcv ms':>7} {'other':>6} ok"
    )
    print(header)
    for run in result["runs"]:
        p = run["phase"]
        bare = f"{run['bare']['requests_per_s']:.0f}/{run['bare_after']['requests_per_s']:.0f}"
        print(
            f"{run['round']:>5} {run['code']:>8} {p['workers']:>2} {bare:>11} "
            f"{run['bare']['cpu_ms_per_request']:>8.2f} "
            f"{p['deliveries_per_s']:>8.0f} {'/'.join(f'{r:.0f}' for r in p['per_worker_per_s']):>22} "
            f"{'/'.join(f'{r:.2f}' for r in p['ratio_per_worker_to_bare']):>12} "
            f"{p['worker_cpu_ms_per_delivery']:>7.2f} {p['postgres_cpu_ms_per_delivery']:>6.2f} "
            f"{p['receiver_cpu_ms_per_delivery']:>7.3f} {p['transactions_per_100_deliveries']:>6.1f} "
            f"{100 * p['cpu_seconds']['other_share']:>5.0f}% "
            f"{'yes' if p['checks']['all_ok'] else 'NO ' + json.dumps(p['checks'])}"
        )
    print(
        "\nbare req/s: one httpx.AsyncClient with the workers' concurrency, before/after the phase;"
        "\nbare ms: its CPU per request; ratio: each worker's deliveries/s / the bare rate before the"
        "\nphase; wrk/pg/rcv ms: CPU per delivery of all workers / PostgreSQL backends / the receiver;"
        "\ntx/100: transactions per 100 deliveries; other: other programs' share of the CPUs."
    )
    for profile in result["profiles"]:
        print(json.dumps(profile, indent=1)[:4000])


def parse_code(value: str) -> tuple[str, Path | None]:
    label, _, path = value.partition("=")
    if not path:
        return label, None
    src = Path(path).resolve()
    if not (src / "casefile" / "__init__.py").exists():
        raise argparse.ArgumentTypeError(f"{src} holds no casefile package")
    return label, src


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--receiver", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--baseline", metavar="JSON", help=argparse.SUPPRESS)
    parser.add_argument("--workers", default="2", help="worker processes, comma-separated runs (e.g. 1,2)")
    parser.add_argument("--deliveries", type=int, default=20_000, help="queued per run (bounded: 100,000)")
    parser.add_argument("--concurrency", type=int, default=64, help="per worker, and the bare client's")
    parser.add_argument("--webhooks", type=int, default=8, help="webhooks on the receiver")
    parser.add_argument("--baseline-requests", type=int, default=10_000)
    parser.add_argument(
        "--baseline-clients", type=int, default=8, help="also bare httpx with N clients (1: skip)"
    )
    parser.add_argument("--warmup-events", type=int, default=50)
    parser.add_argument(
        "--code",
        type=parse_code,
        action="append",
        help="LABEL=SRC_DIR: run the workers on that tree's code (repeatable); default: this tree",
    )
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--profile", action="store_true", help="the first worker under py-spy")
    parser.add_argument("--admin-url", default=wd.DEFAULT_ADMIN_URL)
    parser.add_argument("--db-name", default=DEFAULT_DB_NAME)
    parser.add_argument("--phase-timeout", type=float, default=180)
    parser.add_argument("--deadline-minutes", type=float, default=20)
    parser.add_argument("--wait-idle", type=float, default=0, help="wait up to N s for a quiet machine")
    parser.add_argument("--keep-temp", action="store_true")
    parser.add_argument("--no-write", action="store_true")
    args = smoke.parse_args(
        parser,
        argv,
        workers="1",
        deliveries=200,  # the receiver keeps every 97th request to check its signature
        concurrency=4,
        webhooks=1,
        baseline_requests=50,
        warmup_events=5,
        phase_timeout=60,
        deadline_minutes=3,
        no_write=True,
    )
    args.workers = [int(n) for n in str(args.workers).split(",")]
    args.code = args.code or [("this", None)]
    if not 1 <= args.deliveries <= 100_000 or min(args.workers) < 1:
        parser.error("--deliveries must be 1..100,000 and --workers positive")
    return args


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    bench = Bench(args)
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, task.cancel)
    try:
        async with asyncio.timeout(args.deadline_minutes * 60):
            return await bench.run()
    except TimeoutError as exc:
        raise wd.BenchError(f"deadline of {args.deadline_minutes} min reached") from exc
    finally:
        await asyncio.shield(bench.cleanup())


def main(argv: list[str] | None = None) -> int:
    import uvloop

    args = parse_args(argv)
    if args.receiver:
        uvloop.run(receiver_main())
        return 0
    if args.baseline:
        uvloop.run(baseline_main(json.loads(args.baseline)))
        return 0
    try:
        result = asyncio.run(main_async(args))
    except wd.BenchError as exc:
        log(f"FAILED: {exc}")
        return 1
    print_table(result)
    if not args.no_write:
        wd.RESULTS_DIR.mkdir(parents=True, exist_ok=True)
        stamp = datetime.fromisoformat(result["started_at"]).strftime("%Y%m%dT%H%M%SZ")
        path = wd.RESULTS_DIR / f"webhook_workers-{stamp}.json"
        path.write_text(json.dumps(result, indent=2, default=str) + "\n")
        log(f"results written to {path.relative_to(ROOT)}")
    return 0 if all(r["phase"]["checks"]["all_ok"] for r in result["runs"]) else 2


if __name__ == "__main__":
    sys.exit(main())
