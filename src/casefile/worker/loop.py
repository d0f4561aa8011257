"""The delivery worker: keeps up to `worker_concurrency` deliveries in flight (at most
`worker_per_webhook_concurrency` per webhook, so one slow or failing receiver cannot hold back the
others), claims more whenever a slot frees or a wake-up arrives, and polls as a safety net.

It runs inside `casefile serve` by default and alone as `casefile worker`; any number may run
against one PostgreSQL database.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter

import httpx

from casefile.runtime import Runtime
from casefile.webhooks import delivery as engine
from casefile.webhooks.ssrf import GuardedTransport

log = logging.getLogger(__name__)
CLAIM_BATCH = 50


class DeliveryWorker:
    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        settings = runtime.settings
        self.concurrency = settings.worker_concurrency
        self.per_webhook = settings.worker_per_webhook_concurrency
        self.in_flight: set[asyncio.Task[None]] = set()
        self.by_webhook: Counter[str] = Counter()

    async def run(self, stop: asyncio.Event) -> None:
        settings = self.runtime.settings
        wakeup = self.runtime.wakeup
        transport = GuardedTransport(
            allow_private=settings.webhook_allow_private_urls, max_connections=self.concurrency
        )
        listener = asyncio.create_task(wakeup.listen(settings.resolved_database_url, stop))
        try:
            # timeout=None: each attempt runs under one hard asyncio.timeout for the whole request.
            client = httpx.AsyncClient(transport=transport, follow_redirects=False, timeout=None)  # noqa: S113
            async with client:
                while not stop.is_set():
                    wakeup.clear()
                    try:
                        claimed = await self._claim_and_start(client)
                    except Exception:
                        log.exception("claiming deliveries failed; trying again shortly")
                        claimed = 0
                    if claimed < CLAIM_BATCH or len(self.in_flight) >= self.concurrency:
                        await self._wait(stop, settings.worker_poll_seconds)
                await self._drain(settings.webhook_timeout_seconds + 5)
        finally:
            listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await listener

    async def _wait(self, stop: asyncio.Event, timeout: float) -> None:
        stopping = asyncio.create_task(stop.wait())
        waking = asyncio.create_task(self.runtime.wakeup.wait(timeout))
        await asyncio.wait({stopping, waking}, return_when=asyncio.FIRST_COMPLETED)
        for task in (stopping, waking):
            task.cancel()

    async def _claim_and_start(self, client: httpx.AsyncClient) -> int:
        free = self.concurrency - len(self.in_flight)
        if free <= 0:
            return 0
        allowance = {hook: self.per_webhook - n for hook, n in self.by_webhook.items() if n}
        async with self.runtime.db.transaction(write=True) as session:
            claims = await engine.claim_due(
                session,
                self.runtime,
                limit=min(free, CLAIM_BATCH),
                allowance=allowance,
                default_allowance=self.per_webhook,
            )
        for claim in claims:
            self.by_webhook[claim.webhook_id] += 1
            task = asyncio.create_task(self._deliver(client, claim))
            self.in_flight.add(task)
            task.add_done_callback(self.in_flight.discard)
        return len(claims)

    async def _deliver(self, client: httpx.AsyncClient, claim: engine.Claim) -> None:
        try:
            outcome = await engine.attempt(client, claim, self.runtime.settings.webhook_timeout_seconds)
            await engine.record(self.runtime, claim, outcome)
        except Exception:
            # The lease runs out and the delivery is attempted again: nothing is lost.
            log.exception("delivery %s attempt %d could not be completed", claim.delivery_id, claim.attempt)
        finally:
            self.by_webhook[claim.webhook_id] -= 1
            if self.by_webhook[claim.webhook_id] <= 0:
                del self.by_webhook[claim.webhook_id]
            # This task's slot is free now; the done-callback would free it only later, and other
            # tasks that finished in this loop turn are already gone from the set.
            current = asyncio.current_task()
            if current is not None:
                self.in_flight.discard(current)
            # Claim again once a batch's worth of slots is free (or the worker ran dry), not after
            # every single completion: one claim transaction serves many deliveries.
            free = self.concurrency - len(self.in_flight)
            if free >= min(CLAIM_BATCH, max(1, self.concurrency // 4)) or not self.in_flight:
                self.runtime.wakeup.signal()

    async def _drain(self, timeout: float) -> None:
        """On stop: let attempts in flight finish, up to one time-out; the rest are retried later."""
        if not self.in_flight:
            return
        _, pending = await asyncio.wait(set(self.in_flight), timeout=timeout)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)


async def run_worker(runtime: Runtime, stop: asyncio.Event) -> None:
    """Run a worker until `stop`, restarting it after an unexpected failure."""
    while not stop.is_set():
        try:
            await DeliveryWorker(runtime).run(stop)
        except Exception:
            log.exception("the delivery worker failed; restarting in 1 s")
            await asyncio.sleep(1)
