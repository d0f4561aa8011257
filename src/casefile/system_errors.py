"""`system.error`: an unhandled server error becomes an event, at most once a minute per error.

"The same error" is the same exception type raised at the same line for the same route: a
fingerprint that stays put when only ids in the path or data differ. The payload names the error
and the request id, never the exception's message or arguments (they may hold data or secrets);
the full story is in the log under the request id.

With Redis, one `SET NX EX` per fingerprint makes the once-a-minute hold across every process;
without it, each process keeps its own clock.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from types import TracebackType

from redis.asyncio import Redis

from casefile.db import Database
from casefile.events import payloads
from casefile.events.outbox import emit
from casefile.events.schemas import SystemErrorData

log = logging.getLogger(__name__)

WINDOW_SECONDS = 60


def fingerprint(exc: BaseException, method: str, route: str) -> str:
    """Exception type + where it was raised (innermost frame) + method and route template."""
    tb: TracebackType | None = exc.__traceback__
    where = ""
    while tb is not None:
        where = f"{tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}"
        tb = tb.tb_next
    raw = f"{type(exc).__module__}.{type(exc).__qualname__}|{where}|{method}|{route}"
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


class ErrorReporter:
    def __init__(self, db: Database, redis: Redis | None, key_prefix: str) -> None:
        self.db = db
        self.redis = redis
        self.key_prefix = key_prefix
        self._last_emitted: dict[str, float] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def report(
        self, exc: BaseException, *, method: str, path: str, route: str, request_id: str | None
    ) -> None:
        """Called from the error handler; the event is written in the background, so the 500
        answer is not delayed, nor lost if the database is what failed."""
        data = payloads.system_error(
            request_id=request_id,
            method=method,
            path=path,
            error_type=type(exc).__qualname__,
            fingerprint=fingerprint(exc, method, route),
        )
        task = asyncio.create_task(self._emit(data))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _emit(self, data: SystemErrorData) -> None:
        try:
            if not await self._first_in_window(str(data["fingerprint"])):
                return
            async with self.db.transaction(write=True) as session:
                await emit(session, "system.error", data)
        except Exception:
            log.warning("could not record system.error %s", data["fingerprint"], exc_info=True)

    async def _first_in_window(self, key: str) -> bool:
        if self.redis is not None:
            return bool(
                await self.redis.set(f"{self.key_prefix}:system-error:{key}", 1, nx=True, ex=WINDOW_SECONDS)
            )
        now = time.monotonic()
        last = self._last_emitted.get(key)
        if last is not None and now - last < WINDOW_SECONDS:
            return False
        self._last_emitted[key] = now
        if len(self._last_emitted) > 10_000:  # bounded: forget errors not seen for a window
            self._last_emitted = {k: t for k, t in self._last_emitted.items() if now - t < WINDOW_SECONDS}
        return True

    async def aclose(self) -> None:
        """Let reports in progress finish (briefly) before the database closes."""
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=5)
