"""The bulk worker: claims bulk jobs and does their matters (`bulk.service.run_claim`). Started
with the other background workers (`casefile.background`); several processes may run one each:
a job is leased to one at a time."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from casefile.bulk.service import claim_next, run_claim
from casefile.runtime import Runtime

log = logging.getLogger(__name__)


class BulkWorker:
    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                claim = await claim_next(self.runtime)
                if claim is not None:
                    await run_claim(self.runtime, claim)
                    continue  # another job may be waiting
            except Exception:
                log.exception("the bulk worker failed; trying again shortly")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=self.runtime.settings.worker_poll_seconds)
