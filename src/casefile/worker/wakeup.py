"""Wake-ups for the background workers: a new delivery goes out within milliseconds, not at the
next poll. In-process: an asyncio.Event set after the commit. Across processes (deliveries only):
PostgreSQL LISTEN/NOTIFY (the NOTIFY is sent inside the transaction, so it arrives only if it
commits) and, when configured, Redis pub/sub. Polling remains the safety net; wake-ups only make
it faster."""

from __future__ import annotations

import asyncio
import contextlib
import logging

import asyncpg
from redis.asyncio import Redis
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.db import transaction_state

CHANNEL = "casefile_deliveries"
log = logging.getLogger(__name__)


class Wakeup:
    def __init__(self, redis: Redis | None = None) -> None:
        self._event: asyncio.Event | None = None
        self.redis = redis

    @property
    def event(self) -> asyncio.Event:
        if self._event is None:  # created in the running loop
            self._event = asyncio.Event()
        return self._event

    def signal(self) -> None:
        self.event.set()

    async def announce(self) -> None:
        """After a commit that created deliveries: wake this process's worker, and others."""
        self.signal()
        if self.redis is not None:
            try:
                await self.redis.publish(CHANNEL, "1")
            except Exception:  # a missed wake-up only costs one poll interval
                log.warning("could not publish a delivery wake-up to Redis", exc_info=True)

    async def wait(self, stop: asyncio.Event, timeout: float) -> None:
        """A worker's pause between claims: until a wake-up, `stop`, or `timeout` seconds (the poll)."""
        stopping = asyncio.create_task(stop.wait())
        waking = asyncio.create_task(self.event.wait())
        await asyncio.wait({stopping, waking}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        for task in (stopping, waking):
            task.cancel()

    @staticmethod
    async def _wait_for(stop: asyncio.Event, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await stop.wait()

    def clear(self) -> None:
        self.event.clear()

    async def listen(self, database_url: str, stop: asyncio.Event) -> None:
        """Relay wake-ups from other processes until `stop` is set."""
        tasks = []
        if database_url.startswith("postgresql"):
            tasks.append(asyncio.create_task(self._listen_postgres(database_url, stop)))
        if self.redis is not None:
            tasks.append(asyncio.create_task(self._listen_redis(stop)))
        if not tasks:
            return
        try:
            await stop.wait()
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _listen_postgres(self, database_url: str, stop: asyncio.Event) -> None:
        dsn = make_url(database_url).set(drivername="postgresql").render_as_string(hide_password=False)
        while not stop.is_set():
            try:
                connection = await asyncpg.connect(dsn)
                try:
                    await connection.add_listener(CHANNEL, lambda *_: self.signal())
                    self.signal()  # anything announced while we were not listening
                    while not stop.is_set() and not connection.is_closed():
                        await self._wait_for(stop, 5)
                finally:
                    await connection.close()
            except (OSError, asyncpg.PostgresError):
                log.warning("delivery wake-ups from PostgreSQL interrupted; reconnecting", exc_info=True)
                await asyncio.sleep(2)

    async def _listen_redis(self, stop: asyncio.Event) -> None:
        assert self.redis is not None
        while not stop.is_set():
            try:
                async with self.redis.pubsub() as pubsub:
                    await pubsub.subscribe(CHANNEL)
                    async for message in pubsub.listen():
                        if message.get("type") == "message":
                            self.signal()
            except Exception:
                log.warning("delivery wake-ups from Redis interrupted; reconnecting", exc_info=True)
                await asyncio.sleep(2)


async def notify_in_transaction(session: AsyncSession) -> None:
    """PostgreSQL: queue a NOTIFY that is delivered when (and only if) the transaction commits."""
    state = transaction_state(session)
    if session.get_bind().dialect.name == "postgresql" and not state.get("notified"):
        state["notified"] = True
        await session.execute(text(f"SELECT pg_notify('{CHANNEL}', '')"))
