"""The background work of one process: the webhook delivery worker, the AI job worker, the
retention purge of the trash, the bulk-action worker, the matter-export worker and the audit log's sequencer.

`casefile serve` runs them in its lifespan (unless `--no-worker`), `casefile worker` runs only
them. This module sits above both domains, since `casefile.worker` (the supervisor, wake-ups and
leases they share) imports neither.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from casefile.ai.worker import AiWorker
from casefile.audit.sequencer import Sequencer
from casefile.bulk.worker import BulkWorker
from casefile.events import payloads
from casefile.events.outbox import emit
from casefile.exports.worker import ExportWorker
from casefile.runtime import Runtime
from casefile.search.repository import replace_passages
from casefile.trash.worker import RetentionWorker
from casefile.webhooks.worker import DeliveryWorker
from casefile.worker.supervisor import keep_running


async def run_background_workers(runtime: Runtime, stop: asyncio.Event) -> None:
    """Deliver webhooks, run AI jobs and sequence the audit log until `stop`; a worker that fails
    is replaced."""
    await asyncio.gather(
        keep_running("delivery worker", functools.partial(DeliveryWorker, runtime), stop),
        # The AI worker stores passages through search's repository: ai/ does not import search/.
        keep_running("AI worker", functools.partial(AiWorker, runtime, replace_passages), stop),
        keep_running("retention worker", functools.partial(RetentionWorker, runtime), stop),
        keep_running("bulk worker", functools.partial(BulkWorker, runtime), stop),
        keep_running("export worker", functools.partial(ExportWorker, runtime), stop),
        # One sequencer leads at a time (a lease); the others stand by to take over.
        keep_running("audit sequencer", functools.partial(audit_sequencer, runtime), stop),
    )


def audit_sequencer(runtime: Runtime) -> Sequencer:
    return Sequencer(runtime.db, runtime.settings, TreeHeadEvents(runtime.settings.audit_head_event_seconds))


class TreeHeadEvents:
    """The `audit.tree_head` events of one sequencer: its first head, then at most one head every
    `every_seconds` (0: every head). Under steady load the sequencer signs a head a batch, up to
    four a second, and an event each would fill the events table and every `*` subscriber's
    queue; one a minute is as good for keeping heads outside (a rewrite of anything a kept head
    covers is detected), and every head stays in the database, served by `/audit/tree-heads`.
    The event is emitted in the batch's own transaction: the audit trail sits below the events."""

    def __init__(self, every_seconds: float) -> None:
        self.every_ms = round(every_seconds * 1000)
        self.last_ms: int | None = None

    def announces(self, timestamp_ms: int) -> bool:
        """Whether the head signed at `timestamp_ms` is announced (and so the next one waits)."""
        if self.last_ms is not None and timestamp_ms - self.last_ms < self.every_ms:
            return False
        self.last_ms = timestamp_ms
        return True

    async def __call__(self, session: AsyncSession, head: dict[str, Any]) -> None:
        if self.announces(head["timestamp"]):
            await emit(session, "audit.tree_head", payloads.audit_tree_head(head))
