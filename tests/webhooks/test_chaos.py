"""Delivery workers killed every few seconds while events flow (issue 27, item 3), on PostgreSQL
with Redis, as a bounded run: the full size (5,000 events) is bench/webhook_chaos.py."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from tests.support.chaos import SETTINGS, run_chaos
from tests.support.receivers import Receiver
from tests.support.servers import REDIS_URL, make_settings, redis_available, serving


@pytest.mark.skipif(not redis_available(), reason="Redis is not reachable (CI requires it)")
# A loaded CI machine starts a worker slowly, and only a started worker is killed: room for that.
@pytest.mark.timeout(600)
def test_workers_killed_every_few_seconds_lose_nothing(
    database: tuple[Path, str | None], backend: str, receiver: Receiver, tmp_path: Path
) -> None:
    if backend != "postgresql":
        pytest.skip("several worker processes share one database on PostgreSQL")
    data_dir, url = database
    settings = make_settings(
        data_dir,
        url,
        worker_enabled=False,
        redis_url=REDIS_URL,
        redis_key_prefix=f"test-{secrets.token_hex(6)}",
        **SETTINGS,
    )
    with serving(settings) as api:
        figures = run_chaos(api, receiver, tmp_path, events=300, workers=2, kill_every=3.0, timeout=480)
    print(figures)  # shown with -s: the run's figures
    assert figures["kills"] >= 2, figures
    assert figures["lost"] == 0, figures
    assert figures["dead_answered_2xx"] == 0, figures
    assert figures["unexplained_duplicates"] == 0, figures
    assert figures["statuses"] == {"succeeded": 300}, figures
