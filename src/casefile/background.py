"""The background work of one process: the webhook delivery worker, the AI job worker, the
retention purge of the trash and the audit log's sequencer.

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
from casefile.events import payloads
from casefile.events.outbox import emit
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
        # One sequencer leads at a time (a lease); the others stand by to take over.
        keep_running("audit sequencer", functools.partial(audit_sequencer, runtime), stop),
    )


def audit_sequencer(runtime: Runtime) -> Sequencer:
    return Sequencer(runtime.db, runtime.settings, announce_tree_head)


async def announce_tree_head(session: AsyncSession, head: dict[str, Any]) -> None:
    """Each signed tree head is an `audit.tree_head` event, in the batch's own transaction: the
    audit trail sits below the events."""
    await emit(session, "audit.tree_head", payloads.audit_tree_head(head))
