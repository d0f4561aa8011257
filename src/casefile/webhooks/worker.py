"""The delivery worker: keeps up to `worker_concurrency` deliveries in flight (at most
`worker_per_webhook_concurrency` per webhook, so one slow or failing receiver cannot hold back the
others), claims more whenever a slot frees or a wake-up arrives, and polls as a safety net.

Two things keep the worker's own CPU cost per delivery low (measured in
docs/research/bench-webhook-results-2026-11.md):

- HTTP goes through several small httpx clients instead of one with a big pool: httpcore checks
  every connection of its pool on each request and response, so the cost grows with pool size.
- Outcomes are recorded in batches (group commit): one recorder task writes every outcome that
  finished while the previous batch was committing, in one transaction. A delivery's slot is freed
  only once its outcome is durable, exactly as when each outcome had its own transaction.

It runs inside `casefile serve` by default and alone as `casefile worker` (both start it with
`casefile.background`); any number may run against one PostgreSQL database.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections import Counter
from collections.abc import AsyncIterator

import httpx

from casefile.runtime import Runtime
from casefile.settings import Settings
from casefile.webhooks import recording
from casefile.webhooks.claims import claim_due
from casefile.webhooks.delivery import Claim, Outcome, attempt, count_attempt, delivery_client

log = logging.getLogger(__name__)
CLAIM_BATCH = 50
HTTP_CLIENTS = 8  # measured: 8 pools of 8 connections cost a third of one pool of 64 per request


class HttpClients:
    """Several httpx clients, each on its own `GuardedTransport` (so the SSRF guard checks every
    connection of every pool), sharing the worker's `concurrency` connections between them.

    A request goes to the client with the fewest requests in flight. Since the worker never has more
    than `concurrency` requests in flight and the pools hold `ceil(concurrency / n)` connections
    each, that client always has a free connection: no request waits in a pool's queue, so an
    attempt's time-out measures only its receiver, never other receivers' slow requests.
    """

    def __init__(self, settings: Settings, concurrency: int, n: int = HTTP_CLIENTS) -> None:
        n = max(1, min(n, concurrency))
        per_client = math.ceil(concurrency / n)
        self.clients = [
            delivery_client(allow_private=settings.webhook_allow_private_urls, max_connections=per_client)
            for _ in range(n)
        ]
        self.busy = [0] * n

    @contextlib.asynccontextmanager
    async def lease(self) -> AsyncIterator[httpx.AsyncClient]:
        """The least busy client, for one request. (The first such, so that at low load the same
        few connections are reused rather than one per client kept open.)"""
        index = min(range(len(self.clients)), key=self.busy.__getitem__)
        self.busy[index] += 1
        try:
            yield self.clients[index]
        finally:
            self.busy[index] -= 1

    async def aclose(self) -> None:
        for client in self.clients:
            await client.aclose()


Pending = tuple[Claim, Outcome, "asyncio.Future[None]"]


class OutcomeRecorder:
    """Records attempts' outcomes in batches (group commit). `record` queues an outcome and returns
    once it is committed, or raises if it could not be; `run`, one task, writes everything that
    was queued meanwhile in one transaction (`record_batch`)."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.queue: asyncio.Queue[Pending] = asyncio.Queue()

    async def record(self, claim: Claim, outcome: Outcome) -> None:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.queue.put_nowait((claim, outcome, done))
        await done

    async def run(self) -> None:
        """Until cancelled. Outcomes it has not written by then are failed, never left waiting (their
        leases run out and the deliveries are attempted again)."""
        batch: list[Pending] = []
        try:
            while True:
                batch = [await self.queue.get()]
                while not self.queue.empty():
                    batch.append(self.queue.get_nowait())
                await self._write(batch)
                batch = []
        finally:
            while not self.queue.empty():
                batch.append(self.queue.get_nowait())
            _settle(batch, RuntimeError("the worker stopped before this outcome was recorded"))

    async def _write(self, batch: list[Pending]) -> None:
        try:
            await recording.record_batch(self.runtime, [(claim, outcome) for claim, outcome, _ in batch])
        except Exception as exc:
            if len(batch) == 1:
                _settle(batch, exc)
                return
            # One bad row must not fail the others (they would be attempted again): record each on
            # its own, as when every outcome had its own transaction.
            log.warning("recording %d outcomes together failed; recording them one by one", len(batch))
            for item in batch:
                await self._write([item])
            return
        _settle(batch, None)


def _settle(batch: list[Pending], error: BaseException | None) -> None:
    for _, _, done in batch:
        if done.done():  # its delivery task was cancelled (shutdown) and no longer waits
            continue
        if error is None:
            done.set_result(None)
        else:
            done.set_exception(error)


class DeliveryWorker:
    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        settings = runtime.settings
        self.concurrency = settings.worker_concurrency
        self.per_webhook = settings.worker_per_webhook_concurrency
        self.in_flight: set[asyncio.Task[None]] = set()
        self.by_webhook: Counter[str] = Counter()
        self.recorder = OutcomeRecorder(runtime)

    async def run(self, stop: asyncio.Event) -> None:
        settings = self.runtime.settings
        wakeup = self.runtime.wakeup
        http = HttpClients(settings, self.concurrency)
        listener = asyncio.create_task(wakeup.listen(settings.resolved_database_url, stop))
        recorder = asyncio.create_task(self.recorder.run())
        try:
            while not stop.is_set():
                if recorder.done():
                    recorder.result()  # it failed: raise, and `keep_running` starts a new worker
                    raise RuntimeError("the outcome recorder stopped")
                wakeup.clear()
                try:
                    claimed = await self._claim_and_start(http)
                except Exception:
                    log.exception("claiming deliveries failed; trying again shortly")
                    claimed = 0
                if claimed < CLAIM_BATCH or len(self.in_flight) >= self.concurrency:
                    await wakeup.wait(stop, settings.worker_poll_seconds)
            # The recorder still runs here, so attempts that finish in time are recorded.
            await self._drain(settings.webhook_timeout_seconds + 5)
        finally:
            for task in (listener, recorder):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            await http.aclose()

    async def _claim_and_start(self, http: HttpClients) -> int:
        free = self.concurrency - len(self.in_flight)
        if free <= 0:
            return 0
        allowance = {hook: self.per_webhook - n for hook, n in self.by_webhook.items() if n}
        async with self.runtime.db.transaction(write=True) as session:
            claims = await claim_due(
                session,
                self.runtime,
                limit=min(free, CLAIM_BATCH),
                allowance=allowance,
                default_allowance=self.per_webhook,
            )
        for claim in claims:
            self.by_webhook[claim.webhook_id] += 1
            task = asyncio.create_task(self._deliver(http, claim))
            self.in_flight.add(task)
            task.add_done_callback(self.in_flight.discard)
        return len(claims)

    async def _deliver(self, http: HttpClients, claim: Claim) -> None:
        try:
            async with http.lease() as client:
                outcome = await attempt(client, claim, self.runtime.settings.webhook_timeout_seconds)
            count_attempt(self.runtime, outcome)
            # Returns once the outcome is committed: the slot is freed below only after that.
            await self.recorder.record(claim, outcome)
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
