"""The webhook chaos scenario (issue 27): many events, delivery workers killed (SIGKILL) every few
seconds and replaced, until every delivery has an outcome. Shared by tests/webhooks/test_chaos.py
(a bounded run) and bench/webhook_chaos.py (5,000 events, and `--smoke`).

What it checks, from the receiver's log and the database:
- lost: deliveries that did not succeed, or that the receiver never got: must be 0;
- dead_answered_2xx: dead deliveries the receiver answered 2xx: must be 0;
- unexplained_duplicates: receptions beyond the first that no interrupted attempt (an attempt cut
  off by a kill) accounts for: must be 0.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from pathlib import Path
from typing import Any

from casefile.events.outbox import emit
from casefile.settings import Settings
from casefile.startup import start_runtime
from tests.support.assertions import ok
from tests.support.processes import Process
from tests.support.receivers import Receiver
from tests.support.servers import Api

SECRET = "whsec_chaos_0123456789abcdef"
WORKER_STARTED = "delivery, AI and audit workers started"  # `casefile worker`'s log, once running
# Short leases so that a killed worker's deliveries are taken over within seconds, with room
# enough that a live worker on a busy machine never loses one.
SETTINGS = {"webhook_timeout_seconds": 3, "worker_lease_margin_seconds": 5, "worker_poll_seconds": 0.2}


async def _queue(settings: Settings, events: int, batch: int = 250) -> None:
    runtime = start_runtime(settings)
    try:
        for start in range(0, events, batch):
            async with runtime.db.transaction() as session:
                for number in range(start, min(events, start + batch)):
                    await emit(session, "case.created", {"case_id": f"case_chaos_{number}", "n": number})
    finally:
        await runtime.close()


def run_chaos(
    api: Api,
    receiver: Receiver,
    tmp_path: Path,
    *,
    events: int,
    workers: int = 2,
    kill_every: float = 3.0,
    timeout: float = 600.0,
    seed: int = 27,
) -> dict[str, Any]:
    """`api`: a server on the database with no worker of its own (`worker_enabled=False`)."""
    rng = random.Random(seed)
    receiver.script = [("hang", 0.02)]  # a little time on the wire, so kills catch attempts in flight
    with api.admin() as admin:
        hook = {
            "name": "chaos",
            "url": receiver.url,
            "events": ["case.created"],
            "secret": SECRET,
            "retry_policy": {"max_attempts": 5, "initial_delay": 1, "backoff_multiplier": 1},
        }
        webhook_id = ok(admin.post("/admin/webhooks", json=hook), 201)["id"]
    asyncio.run(_queue(api.settings, events))
    settings = api.settings
    running = [_worker(settings, tmp_path, i) for i in range(workers)]
    started, kills, spawned = time.monotonic(), 0, workers
    next_kill = started + kill_every
    try:
        while _open(api, webhook_id) > 0:
            if time.monotonic() - started > timeout:
                raise AssertionError(f"not finished within {timeout} s: {_statuses(api, webhook_id)}")
            # Only a worker that has started delivering is killed: on a loaded machine a worker
            # can take longer to start than the interval, and killing it then tests nothing.
            ready = [worker for worker in running if _started(worker)]
            if time.monotonic() >= next_kill and ready:
                victim = ready[rng.randrange(len(ready))]
                running.remove(victim)
                victim.kill()
                kills += 1
                running.append(_worker(settings, tmp_path, spawned))
                spawned += 1
                next_kill = time.monotonic() + kill_every * rng.uniform(0.5, 1.5)
            time.sleep(0.2)
        elapsed = time.monotonic() - started
    finally:
        for worker in running:
            worker.stop()
    return _figures(api, receiver, webhook_id, events=events, kills=kills, elapsed=elapsed)


def _worker(settings: Settings, tmp_path: Path, number: int) -> Process:
    return Process("worker", settings, tmp_path / f"chaos-worker-{number}.log", worker_enabled=True)


def _started(worker: Process) -> bool:
    return WORKER_STARTED in worker.log.read_text(errors="replace")


def _open(api: Api, webhook_id: str) -> int:
    rows = api.sql(
        "SELECT count(*) FROM deliveries WHERE webhook_id = :w AND status IN ('pending', 'retrying')",
        w=webhook_id,
    )
    return int(rows[0][0])


def _statuses(api: Api, webhook_id: str) -> Counter[str]:
    rows = api.sql(
        "SELECT status, count(*) FROM deliveries WHERE webhook_id = :w GROUP BY status", w=webhook_id
    )
    return Counter({status: int(n) for status, n in rows})


def _figures(
    api: Api, receiver: Receiver, webhook_id: str, *, events: int, kills: int, elapsed: float
) -> dict[str, Any]:
    received = Counter(r.json()["metadata"]["delivery_id"] for r in receiver.received())
    rows = api.sql(
        "SELECT d.id, d.status, "
        "(SELECT count(*) FROM delivery_attempts a WHERE a.delivery_id = d.id AND a.interrupted), "
        "(SELECT count(*) FROM delivery_attempts a WHERE a.delivery_id = d.id) "
        "FROM deliveries d WHERE d.webhook_id = :w",
        w=webhook_id,
    )
    status = {delivery_id: s for delivery_id, s, _, _ in rows}
    interrupted = {delivery_id: int(n) for delivery_id, _, n, _ in rows}
    attempts = sum(int(n) for _, _, _, n in rows)
    duplicates = {d: n - 1 for d, n in received.items() if n > 1}
    return {
        "events": events,
        "deliveries": len(rows),
        "kills": kills,
        "seconds": round(elapsed, 1),
        "statuses": dict(Counter(status.values())),
        "attempts": attempts,
        "interrupted_attempts": sum(interrupted.values()),
        "received": sum(received.values()),
        "cut_requests": receiver.cut,
        "duplicates": sum(duplicates.values()),
        "lost": sum(1 for d, s in status.items() if s != "succeeded" or d not in received),
        "dead_answered_2xx": sum(1 for d, s in status.items() if s == "dead" and d in received),
        "unexplained_duplicates": sum(max(0, n - interrupted.get(d, 0)) for d, n in duplicates.items()),
    }
