"""Load shedding (docs/operations.md#load-shedding): a process answers at most
`max_concurrent_requests` requests at once; the others wait for a turn in arrival order. A request
that finds `max_queued_requests` already waiting, or that has waited `max_queue_wait_seconds`, is
answered 503 `OVERLOADED` with `Retry-After` at once.

Without it every request is admitted: at 200 connections each one shared the event loop and the
database pool with all the others, and every answer took 20 s (bench/load_shedding.py). Turned
away early, a request costs the server almost nothing and its client knows when to come back;
the requests let in are answered at the speed of a server that is not overloaded.

The health checks and `/metrics` are never queued: a busy process is alive, and its operator must
see why it is busy.
"""

from __future__ import annotations

import asyncio
import collections
from typing import Any

from prometheus_client import Counter, Gauge
from starlette.types import Receive, Scope, Send

from casefile.error_handlers import app_error_response
from casefile.errors import Overloaded
from casefile.metrics import Metrics
from casefile.middleware import HttpMiddleware

EXEMPT_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})


class ShedMetrics:
    """What shedding adds to `/metrics`."""

    def __init__(self, metrics: Metrics) -> None:
        self.shed = Counter(
            "casefile_http_requests_shed",
            "Requests answered 503 OVERLOADED, by reason (queue_full, waited_too_long)",
            ["reason"],
            registry=metrics.registry,
        )
        self.queued = Gauge(
            "casefile_http_requests_queued", "Requests waiting for a turn", registry=metrics.registry
        )
        for reason in ("queue_full", "waited_too_long"):
            self.shed.labels(reason)  # both series exist (at 0) before the first refusal


class LoadSheddingMiddleware(HttpMiddleware):
    def __init__(
        self,
        app: Any,
        *,
        metrics: Metrics,
        max_concurrent: int,
        max_queued: int,
        max_wait: float,
        retry_after: int,
    ) -> None:
        super().__init__(app)
        self.max_concurrent = max_concurrent
        self.max_queued = max_queued
        self.max_wait = max_wait
        self.retry_after = str(retry_after)
        self.active = 0
        # Each waiting request's future: resolved when a finishing request hands it its turn.
        self.waiting: collections.deque[asyncio.Future[None]] = collections.deque()
        self.metrics = ShedMetrics(metrics)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.max_concurrent == 0 or scope["path"] in EXEMPT_PATHS:
            await self.app(scope, receive, send)
            return
        if self.active < self.max_concurrent and not self.waiting:
            self.active += 1
        elif len(self.waiting) >= self.max_queued:
            await self._refuse(scope, receive, send, "queue_full")
            return
        elif not await self._wait_for_turn():
            await self._refuse(scope, receive, send, "waited_too_long")
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self._release()

    async def _wait_for_turn(self) -> bool:
        """True once this request holds a turn (handed over by `_release`, `active` unchanged);
        False after `max_wait` without one."""
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiting.append(turn)
        self.metrics.queued.set(len(self.waiting))
        try:
            async with asyncio.timeout(self.max_wait):
                await turn
            return True
        except TimeoutError:
            # The turn may have been handed over just as the time ran out: then it is ours.
            return turn.done() and not turn.cancelled()
        except asyncio.CancelledError:  # the client went away while waiting
            if turn.done() and not turn.cancelled():
                self._release()  # a turn handed over just before: pass it on
            raise
        finally:
            if turn in self.waiting:
                self.waiting.remove(turn)
            self.metrics.queued.set(len(self.waiting))

    def _release(self) -> None:
        """Hand the finished request's turn to the longest-waiting request, or give it back."""
        while self.waiting:
            turn = self.waiting.popleft()
            if not turn.done():
                turn.set_result(None)
                self.metrics.queued.set(len(self.waiting))
                return
        self.active -= 1

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, reason: str) -> None:
        self.metrics.shed.labels(reason).inc()
        error = Overloaded(headers={"Retry-After": self.retry_after})
        await app_error_response(error)(scope, receive, send)
