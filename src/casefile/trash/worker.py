"""The retention purge in the background: a sweep at start and then every SWEEP_SECONDS.

Several processes may sweep at once: each purge locks its item's row and re-checks it, so an
item is purged once and the others skip it."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from casefile import idempotency
from casefile.runtime import Runtime
from casefile.trash.service import purge_expired

log = logging.getLogger(__name__)

# Retention counts in days: an hourly sweep purges an item at most an hour after its date.
SWEEP_SECONDS = 3600.0


class RetentionWorker:
    def __init__(self, runtime: Runtime, interval: float = SWEEP_SECONDS) -> None:
        self.runtime = runtime
        self.interval = interval

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                await purge_expired(self.runtime)
            except Exception:
                log.exception("the retention purge failed; trying again at the next sweep")
            try:
                await idempotency.purge_expired(self.runtime)
            except Exception:
                log.exception("removing expired idempotency keys failed; trying again at the next sweep")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=self.interval)
