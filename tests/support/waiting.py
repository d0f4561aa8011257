"""Polling for something another thread or process does."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def wait_until(predicate: Callable[[], Any], timeout: float = 15.0, interval: float = 0.05) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"condition not met within {timeout} s")


def well_inside_a_minute(needed: float = 15.0) -> None:
    """Wait, if need be, until a new minute has `needed` seconds left. The rate limiter's sliding
    window counter (casefile.ratelimit) weighs the last minute's hits by the share of it that is
    left: a few hits that straddle the turn of a minute can all pass a per-minute limit they
    exceed (three logins at 2/minute, one second apart across the turn: 2 x 59/60 + 0 < 2)."""
    left = 60 - time.time() % 60
    if left < needed:
        time.sleep(left + 0.1)
