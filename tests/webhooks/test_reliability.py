"""Delivery guarantees across processes, crashes and restarts, with real `casefile` processes.

Each test runs on both databases. Leases are short here (webhook time-out 3 s + margin 1 s) so a
crashed worker's delivery is taken over within seconds.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import httpx

from casefile.settings import Settings
from casefile.webhooks.claims import LOST_ATTEMPT
from tests.support.assertions import ok
from tests.support.processes import Process
from tests.support.servers import ADMIN_EMAIL, ADMIN_PASSWORD, Api, make_settings, serving
from tests.support.waiting import wait_until

SECRET = "whsec_reliability_0123456789"
FAST = {"webhook_timeout_seconds": 3, "worker_lease_margin_seconds": 1, "worker_poll_seconds": 0.2}


def admin_client(base: str) -> httpx.Client:
    with httpx.Client(base_url=base) as c:
        token = ok(c.post("/auth/login", json={"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD}))["token"]
    return httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=30)


def register(client: httpx.Client, url: str, **policy: int) -> str:
    body = {
        "name": "reliable",
        "url": url,
        "events": ["case.created"],
        "secret": SECRET,
        "retry_policy": {"initial_delay": 1, "backoff_multiplier": 1, **policy},
    }
    return str(ok(client.post("/admin/webhooks", json=body), 201)["id"])


def statuses(api_or_settings: Api, webhook_id: str) -> Counter[str]:
    rows = api_or_settings.sql("SELECT status FROM deliveries WHERE webhook_id = :w", w=webhook_id)
    return Counter(r[0] for r in rows)


def test_competing_workers_never_make_the_same_attempt_twice(database, receiver, tmp_path: Path) -> None:
    data_dir, url = database
    # The default lease margin: with FAST's 1 s, a record step delayed by lock contention could let
    # a lease run out, and a second attempt (numbered 2) would rightly follow.
    settings = make_settings(data_dir, url, worker_enabled=False, worker_poll_seconds=0.2)
    with serving(settings) as api, api.admin() as admin:
        hook = register(admin, receiver.url)
        for i in range(120):
            ok(admin.post("/cases", json={"title": f"Race {i}"}), 201)
        assert statuses(api, hook) == Counter(pending=120)
        workers = [
            Process("worker", settings, tmp_path / f"worker-{i}.log", worker_enabled=True) for i in range(3)
        ]
        try:
            wait_until(lambda: statuses(api, hook) == Counter(succeeded=120), timeout=60, interval=0.2)
        finally:
            for worker in workers:
                worker.stop()
        sent = [
            (r.json()["metadata"]["delivery_id"], r.json()["metadata"]["attempt"])
            for r in receiver.received()
        ]
        # Each delivery was sent once, and no attempt twice. Its number is usually 1; on a loaded
        # machine a claim's lease can run out before its worker sends (the CI rehearsal saw one),
        # and the next worker rightly sends it as attempt 2: still one request per delivery.
        assert len(sent) == 120 and len({delivery for delivery, _ in sent}) == 120
        # One finished attempt each; a claim whose lease ran out is an interrupted attempt, never sent.
        attempts = api.sql(
            "SELECT delivery_id, count(*) FROM delivery_attempts WHERE NOT interrupted GROUP BY delivery_id"
        )
        assert len(attempts) == 120 and {n for _, n in attempts} == {1}


def _serve(settings: Settings, tmp_path: Path, name: str) -> Process:
    return Process("serve", settings, tmp_path / f"{name}.log")


def test_a_server_killed_mid_delivery_loses_nothing(database, receiver, tmp_path: Path) -> None:
    data_dir, url = database
    settings = make_settings(data_dir, url, worker_enabled=True, **FAST)
    receiver.script = [("hang", 30), 200]
    first = _serve(settings, tmp_path, "first")
    try:
        with admin_client(first.base) as admin:
            register(admin, receiver.url)
            ok(admin.post("/cases", json={"title": "Crash in flight"}), 201)
        receiver.wait_for(count=1)  # the attempt is on the wire...
        first.kill()  # ...when the process dies (SIGKILL: no clean-up at all)
    finally:
        first.stop()
    second = _serve(settings, tmp_path, "second")
    try:
        before, after = (r.json() for r in receiver.wait_for(count=2, timeout=30))
    finally:
        second.stop()
    assert (
        after["id"] == before["id"] and after["metadata"]["delivery_id"] == before["metadata"]["delivery_id"]
    )
    assert (before["metadata"]["attempt"], after["metadata"]["attempt"]) == (1, 2)
    assert after["data"] == before["data"]
    with serving(settings.model_copy(update={"worker_enabled": False})) as api:
        rows = api.sql("SELECT number, success, error, interrupted FROM delivery_attempts ORDER BY number")
        assert rows == [(1, False, LOST_ATTEMPT, True), (2, True, None, False)]
        # The interrupted attempt was not one of the delivery's tries.
        assert api.sql("SELECT attempts_made, max_attempts FROM deliveries") == [(2, 6)]
        assert api.sql("SELECT status FROM deliveries")[0][0] == "succeeded"


def test_a_restarted_server_still_sends_pending_retries(database, receiver, tmp_path: Path) -> None:
    data_dir, url = database
    settings = make_settings(data_dir, url, worker_enabled=True, **FAST)
    receiver.script = [500, 200]
    first = _serve(settings, tmp_path, "first")
    try:
        with admin_client(first.base) as admin:
            register(admin, receiver.url, initial_delay=2)
            ok(admin.post("/cases", json={"title": "Retry after restart"}), 201)
        receiver.wait_for(count=1)
    finally:
        first.stop()  # a clean stop, with the retry scheduled
    assert len(receiver.received()) == 1
    second = _serve(settings, tmp_path, "second")
    try:
        retried = receiver.wait_for(count=2, timeout=30)[1].json()
    finally:
        second.stop()
    assert retried["metadata"]["attempt"] == 2
