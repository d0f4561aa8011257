"""The loop of a worker whose jobs are leased rows (`lease.Leased`): claim the next due job, run
it, and when none is due wait for the poll interval or `stop`. The bulk and export workers are
this loop over their own `claim_next` and `run_claim`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

log = logging.getLogger(__name__)
ClaimT = TypeVar("ClaimT")


class ClaimWorker(Generic[ClaimT]):
    name = "worker"

    def __init__(
        self,
        claim_next: Callable[[], Awaitable[ClaimT | None]],
        run_claim: Callable[[ClaimT], Awaitable[None]],
        poll_seconds: float,
    ) -> None:
        self.claim_next = claim_next
        self.run_claim = run_claim
        self.poll_seconds = poll_seconds

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                claim = await self.claim_next()
                if claim is not None:
                    await self.run_claim(claim)
                    continue  # another job may be waiting
            except Exception:
                log.exception("the %s failed; trying again shortly", self.name)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=self.poll_seconds)
