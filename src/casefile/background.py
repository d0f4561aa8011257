"""The background work of one process: the webhook delivery worker, the AI job worker and the
retention purge of the trash.

`casefile serve` runs them in its lifespan (unless `--no-worker`), `casefile worker` runs only
them. This module sits above both domains, since `casefile.worker` (the supervisor, wake-ups and
leases they share) imports neither.
"""

from __future__ import annotations

import asyncio
import functools

from casefile.ai.worker import AiWorker
from casefile.runtime import Runtime
from casefile.search.repository import replace_passages
from casefile.trash.worker import RetentionWorker
from casefile.webhooks.worker import DeliveryWorker
from casefile.worker.supervisor import keep_running


async def run_background_workers(runtime: Runtime, stop: asyncio.Event) -> None:
    """Deliver webhooks and run AI jobs until `stop`; a worker that fails is replaced."""
    await asyncio.gather(
        keep_running("delivery worker", functools.partial(DeliveryWorker, runtime), stop),
        # The AI worker stores passages through search's repository: ai/ does not import search/.
        keep_running("AI worker", functools.partial(AiWorker, runtime, replace_passages), stop),
        keep_running("retention worker", functools.partial(RetentionWorker, runtime), stop),
    )
