"""Keeping a background worker running: a worker that fails unexpectedly is replaced by a new one."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Protocol

log = logging.getLogger(__name__)


class BackgroundWorker(Protocol):
    async def run(self, stop: asyncio.Event) -> None:
        """Work until `stop` is set."""


async def keep_running(name: str, start: Callable[[], BackgroundWorker], stop: asyncio.Event) -> None:
    """Run a worker made by `start()` until `stop`, starting a new one 1 s after an unexpected failure."""
    while not stop.is_set():
        try:
            await start().run(stop)
        except Exception:
            log.exception("the %s failed; restarting in 1 s", name)
            await asyncio.sleep(1)
