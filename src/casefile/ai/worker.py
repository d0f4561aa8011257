"""The AI worker: claims jobs and runs them in separate processes, one per slot (`ai_workers`, one
core each), so CPU-heavy extraction and embedding never run on an API event loop. It runs beside
the delivery worker, inside `casefile serve` by default and in `casefile worker` (both start it
with `casefile.background`).

A slot's process is started on its first job (a server that is never sent a document loads no
model) and replaced if it dies or overruns the time limit (ending the process is the only way to
stop a runaway extraction; one process per slot means no other job is touched). On shutdown,
jobs in flight are handed back at once rather than left to their leases.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import multiprocessing
import os
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession

from casefile.ai import jobs, pool_process
from casefile.ai.jobs import JobClaim
from casefile.ai_extra import ai_installed, ai_missing_message
from casefile.clock import format_timestamp, utcnow
from casefile.config.service import load as load_config
from casefile.events import payloads
from casefile.events.outbox import emit
from casefile.models import AiJob, Case, Document
from casefile.nlp.types import NoExtractableText, ProcessingFailed, TextPassage, Vectors
from casefile.runtime import Runtime

if TYPE_CHECKING:  # the pipeline's modules load the model libraries: only its pool process imports them
    from casefile.ai.processing import ProcessedDocument

log = logging.getLogger(__name__)
T = TypeVar("T")


class PassageWriter(Protocol):
    """Replaces a processed document's passages, in the caller's transaction
    (search's `repository.replace_passages`). Handed in by whoever starts the worker, so that ai/
    and search/ do not import each other."""

    async def __call__(
        self,
        session: AsyncSession,
        *,
        document_id: str,
        case_id: str,
        passages: list[TextPassage],
        vectors: Vectors,
        version: int = 1,
    ) -> None: ...


class JobOverran(Exception):
    pass


class AiWorker:
    def __init__(self, runtime: Runtime, write_passages: PassageWriter) -> None:
        self.runtime = runtime
        self.write_passages = write_passages
        self.slots = runtime.settings.ai_workers
        self.in_flight: dict[asyncio.Task[None], JobClaim] = {}
        # One single-process executor per slot, so that ending an overrunning job's process
        # touches no other job. None: the slot's process is not started yet (or was ended).
        self._idle: asyncio.Queue[ProcessPoolExecutor | None] = asyncio.Queue()
        for _ in range(self.slots):
            self._idle.put_nowait(None)
        self._executors: set[ProcessPoolExecutor] = set()

    async def run(self, stop: asyncio.Event) -> None:
        if not ai_installed():
            # Claiming a job it cannot run would only delay it: the job stays queued for a
            # process installed with the extra (docs/deployment.md#several-machines).
            log.warning("AI jobs are left for another worker: %s", ai_missing_message())
            await stop.wait()
            return
        wakeup = self.runtime.ai_wakeup
        try:
            while not stop.is_set():
                wakeup.clear()
                try:
                    await self._claim_and_start()
                except Exception:
                    log.exception("claiming AI jobs failed; trying again shortly")
                await wakeup.wait(stop, self.runtime.settings.worker_poll_seconds)
        finally:
            # Jobs in flight are not waited for (they may take minutes): they are stopped and
            # handed back, so that the next worker starts them at once instead of after the lease.
            claims = list(self.in_flight.values())
            for task in self.in_flight:
                task.cancel()
            await asyncio.gather(*self.in_flight, return_exceptions=True)
            for executor in list(self._executors):
                self._end(executor)
            await self._release(claims)

    async def _release(self, claims: list[JobClaim]) -> None:
        try:
            async with self.runtime.db.transaction(write=True) as session:
                for claim in claims:
                    job = await jobs.holding(session, claim)
                    if job is not None:
                        await jobs.release(session, job)
        except Exception:  # the leases still run out: nothing is lost, only delayed
            log.warning("could not hand back %d AI jobs at shutdown", len(claims), exc_info=True)

    async def _claim_and_start(self) -> None:
        free = self.slots - len(self.in_flight)
        if free <= 0:
            return
        async with self.runtime.db.transaction(write=True) as session:
            # Turning AI off in /admin/config stops new work at once; queued jobs wait.
            if not (await load_config(session, self.runtime.settings)).ai.enabled:
                return
            claims = await jobs.claim(session, self.runtime, limit=free)
        for claim in claims:
            task = asyncio.create_task(self._run(claim))
            self.in_flight[task] = claim
            task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self.in_flight.pop(task, None)
        self.runtime.ai_wakeup.signal()  # a slot is free: claim again without waiting for the poll

    async def _run(self, claim: JobClaim) -> None:
        started = time.monotonic()
        outcome = "completed"
        try:
            if claim.kind == "document":
                await self._process_document(claim, started)
            else:
                await self._summarize_case(claim, started)
        except Exception as exc:
            outcome = "failed"
            # Outside the document's control (a crashed or overrunning process, a database error):
            # retried while attempts remain.
            reason = (
                "Processing took longer than the time limit"
                if isinstance(exc, JobOverran)
                else "Processing stopped unexpectedly"
            )
            log.warning("AI job %s attempt %d failed", claim.job_id, claim.attempt, exc_info=exc)
            async with self.runtime.db.transaction(write=True) as session:
                job = await jobs.holding(session, claim)
                if job is not None:
                    await jobs.fail(session, job, reason, retry=True)
        finally:
            duration = time.monotonic() - started
            self.runtime.metrics.ai_job_duration.labels(claim.kind, outcome).observe(duration)

    async def _process_document(self, claim: JobClaim, started: float) -> None:
        assert claim.document_id is not None
        async with self.runtime.db.transaction(write=False) as session:
            document = await session.get(Document, claim.document_id)
            if document is None:
                return  # deleted meanwhile: its job went with it
            sha256, file_type, title = document.sha256, document.file_type, document.title
            version = document.version
        from casefile.ai.processing import process_document

        result: ProcessedDocument | None = None
        skipped: str | None = None
        failed: str | None = None
        try:
            async with self.runtime.store.local_file(sha256) as path:
                result = await self._in_pool(process_document, path, file_type, title=title)
        except FileNotFoundError:
            return  # the document and its content were deleted meanwhile
        except NoExtractableText as exc:
            skipped = str(exc) or "The file has no text that can be extracted"
        except ProcessingFailed as exc:
            failed = str(exc) or "The file could not be processed"
        async with self.runtime.db.transaction(write=True) as session:
            job = await jobs.holding(session, claim)
            document = await session.get(Document, claim.document_id) if job is not None else None
            if job is None or document is None:
                return  # the lease was taken over, or the document deleted: record nothing
            if failed is not None:
                await jobs.fail(session, job, failed, retry=False)
                return
            # The version it was made from: a newer one (added meanwhile, its job queued) shows it stale.
            processed = {"processed_at": format_timestamp(utcnow()), "version": version}
            if result is not None:
                document.ai = {**result.ai, **processed}
                document.processing_status = "completed"
                await self.write_passages(
                    session,
                    document_id=document.id,
                    case_id=document.case_id,
                    passages=result.passages,
                    vectors=result.vectors,
                    version=version,
                )
            else:
                document.ai = {"skipped_reason": skipped, **processed}
                document.processing_status = "skipped"
            if document.version != version:
                document.processing_status = "pending"  # the newer version's job comes next
            await jobs.mark_summary_stale(session, document, "reprocessed")
            await self._completed(session, job, document.processing_status, started)
            await emit(session, "document.processed", payloads.document_processed(document))

    async def _summarize_case(self, claim: JobClaim, started: float) -> None:
        async with self.runtime.db.transaction(write=False) as session:
            case = await session.get(Case, claim.case_id)
            if case is None:
                return
            title = case.title
            documents = await jobs.processed_documents(session, claim.case_id)
        from casefile.ai.processing import summarize_case

        summary = await self._in_pool(summarize_case, title, documents) if documents else None
        async with self.runtime.db.transaction(write=True) as session:
            job = await jobs.holding(session, claim)
            case = await session.get(Case, claim.case_id) if job is not None else None
            if job is None or case is None:
                return
            if summary is None:
                await jobs.fail(session, job, "The case has no processed documents to summarize", retry=False)
                return
            case.ai = {**summary, "processed_at": format_timestamp(utcnow())}
            await self._completed(session, job, "completed", started)

    @staticmethod
    async def _completed(session: AsyncSession, job: AiJob, status: str, started: float) -> None:
        jobs.finish(job)
        duration_ms = round((time.monotonic() - started) * 1000)
        await emit(
            session,
            "ai.processing_completed",
            payloads.ai_processing_completed(job, status=status, duration_ms=duration_ms),
        )

    async def _in_pool(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        executor = await self._idle.get()  # free: jobs are claimed only for free slots
        try:
            if executor is None:
                executor = await self._start_executor()
            # A partial of a module-level function pickles to the pool process.
            call = functools.partial(function, *args, **kwargs)
            future = asyncio.get_running_loop().run_in_executor(executor, call)
            async with asyncio.timeout(self.runtime.settings.ai_job_timeout_seconds):
                return await future
        except TimeoutError as exc:
            self._end(executor)
            executor = None
            raise JobOverran() from exc
        except BrokenProcessPool:  # its process died (killed, out of memory): start a new one
            self._end(executor)
            executor = None
            raise
        finally:
            self._idle.put_nowait(executor)

    async def _start_executor(self) -> ProcessPoolExecutor:
        # spawn, not fork: this process runs an event loop and threads, which fork would copy in
        # an unknown state. The pool process ends with this one (ai/pool_process.py).
        executor = ProcessPoolExecutor(
            max_workers=1,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=pool_process.initialize,
            initargs=(os.getpid(), self.runtime.settings.ai_memory_limit_mb * 1024 * 1024),
        )
        self._executors.add(executor)
        try:
            # Start the process and load the models before the job's time limit starts.
            await asyncio.get_running_loop().run_in_executor(executor, _ready)
        except BaseException:
            self._end(executor)
            raise
        return executor

    def _end(self, executor: ProcessPoolExecutor | None) -> None:
        """End the executor's process at once: a running call cannot be cancelled otherwise.
        (`_processes` is private, but stable since 3.2; 3.14 adds terminate_workers().)"""
        if executor is None:
            return
        self._executors.discard(executor)
        for process in list((executor._processes or {}).values()):
            with contextlib.suppress(Exception):
                process.kill()
        executor.shutdown(wait=False, cancel_futures=True)


def _ready() -> None:
    """Runs in a pool process once its initializer (the model loading) has finished."""
