"""AI jobs in the database: queue, claim with a lease, record fenced outcomes.

The same lease as webhook deliveries (`casefile.worker.lease`): a job is claimed in a transaction
(`SKIP LOCKED` on PostgreSQL) by taking a lease and bumping a fencing token; the slow work runs
with no transaction open; its outcome is recorded only if the job still holds that token. A worker
that dies mid-job loses its lease, and the job is claimed again when the lease runs out; a job
that keeps failing for reasons outside the document (the worker process crashed, a time-out) is
retried a few times, then failed with a reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import exists, select
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.clock import utcnow
from casefile.db import after_commit
from casefile.events import payloads
from casefile.events.outbox import emit
from casefile.models import AiJob, Case, Document, document_not_trashed
from casefile.runtime import Runtime
from casefile.worker.lease import LeaseClaim, backoff_seconds

MAX_ATTEMPTS = 3
RETRY_BASE_SECONDS = 5.0


@dataclass(frozen=True, kw_only=True)
class JobClaim(LeaseClaim):
    job_id: str
    kind: str
    case_id: str
    document_id: str | None


async def enqueue(
    session: AsyncSession,
    runtime: Runtime,
    *,
    kind: str,
    case_id: str,
    document_id: str | None,
    requested_by: str | None,
) -> AiJob:
    """Queue a job, or return the one already waiting for the same document or case (asking twice
    before it ran does not process twice)."""
    waiting = await session.scalar(
        select(AiJob).where(
            AiJob.kind == kind,
            AiJob.case_id == case_id,
            AiJob.document_id.is_(None) if document_id is None else AiJob.document_id == document_id,
            AiJob.status == "pending",
            AiJob.lease_expires_at.is_(None),
        )
    )
    if waiting is not None:
        return waiting
    now = utcnow()
    job = AiJob(
        kind=kind,
        case_id=case_id,
        document_id=document_id,
        status="pending",
        attempts_made=0,
        max_attempts=MAX_ATTEMPTS,
        next_attempt_at=now,
        lease_token=0,
        requested_by=requested_by,
        created_at=now,
        updated_at=now,
    )
    session.add(job)
    await session.flush()
    after_commit(session, runtime.ai_wakeup.announce)
    return job


async def claim(session: AsyncSession, runtime: Runtime, *, limit: int) -> list[JobClaim]:
    """Claim up to `limit` due jobs. A job whose lease ran out (its worker died) is claimed again,
    or failed if it has used its attempts."""
    now = utcnow()
    rows = await session.scalars(
        select(AiJob)
        .where(AiJob.due(now))
        .order_by(AiJob.next_attempt_at)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    claims: list[JobClaim] = []
    for job in rows:
        if job.attempts_made >= job.max_attempts:
            await _give_up(session, job, "Processing stopped without finishing, on every attempt")
            continue
        job.status = "running"
        # The same margin as deliveries: a worker that died mid-job is taken over this long after
        # the job could at most have finished.
        settings = runtime.settings
        terms = job.take_lease(now, settings.ai_job_timeout_seconds + settings.worker_lease_margin_seconds)
        job.started_at = job.started_at or now
        job.updated_at = now
        claims.append(
            JobClaim(**terms, job_id=job.id, kind=job.kind, case_id=job.case_id, document_id=job.document_id)
        )
        await _start(session, job)
    await session.flush()
    return claims


async def _start(session: AsyncSession, job: AiJob) -> None:
    if job.document_id is not None:
        document = await session.get(Document, job.document_id)
        if document is not None:
            document.processing_status = "processing"
    await emit(session, "ai.processing_started", payloads.ai_processing_started(job))


async def holding(session: AsyncSession, claim: JobClaim) -> AiJob | None:
    """The job, locked, if this claim still holds it; None if its lease was taken over or the job
    is gone (its document or case was deleted meanwhile)."""
    return await session.scalar(
        select(AiJob)
        .where(AiJob.held_by(claim.job_id, claim.lease_token), AiJob.status == "running")
        .with_for_update()
    )


def finish(job: AiJob) -> None:
    now = utcnow()
    job.status, job.lease_expires_at, job.finished_at, job.updated_at = "succeeded", None, now, now
    job.last_error = None


async def release(session: AsyncSession, job: AiJob) -> None:
    """Hand a job back unfinished (its worker is stopping): due at once, the attempt not counted."""
    now = utcnow()
    job.status, job.lease_expires_at, job.next_attempt_at, job.updated_at = "pending", None, now, now
    job.attempts_made = max(0, job.attempts_made - 1)
    if job.document_id is not None:
        document = await session.get(Document, job.document_id)
        if document is not None:
            document.processing_status = "pending"


async def fail(session: AsyncSession, job: AiJob, reason: str, *, retry: bool) -> None:
    """Record a failed attempt: retried later (transient: the worker crashed, a time-out) while
    attempts remain, otherwise the job and its document fail with `reason`."""
    now = utcnow()
    will_retry = retry and job.attempts_made < job.max_attempts
    await emit(
        session,
        "ai.processing_failed",
        payloads.ai_processing_failed(job, reason=reason, will_retry=will_retry),
    )
    job.last_error, job.lease_expires_at, job.updated_at = reason, None, now
    if will_retry:
        delay = backoff_seconds(job.attempts_made, initial=RETRY_BASE_SECONDS, multiplier=2)
        job.status, job.next_attempt_at = "pending", now + timedelta(seconds=delay)
        if job.document_id is not None:
            document = await session.get(Document, job.document_id)
            if document is not None:
                document.processing_status = "pending"
        return
    job.status, job.finished_at = "failed", now
    if job.document_id is not None:
        document = await session.get(Document, job.document_id)
        if document is not None:
            document.processing_status = "failed"


async def _give_up(session: AsyncSession, job: AiJob, reason: str) -> None:
    job.attempts_made = job.max_attempts
    await fail(session, job, reason, retry=False)


async def has_processed_documents(session: AsyncSession, case_id: str) -> bool:
    return bool(
        await session.scalar(
            select(
                exists().where(
                    Document.case_id == case_id,
                    Document.processing_status == "completed",
                    document_not_trashed(),
                )
            )
        )
    )


async def processed_documents(session: AsyncSession, case_id: str) -> list[tuple[str, str, dict[str, Any]]]:
    """(id, title, ai) of the case's processed documents, oldest first: a case summary's input."""
    rows = await session.execute(
        select(Document.id, Document.title, Document.ai)
        .where(Document.case_id == case_id, Document.processing_status == "completed", document_not_trashed())
        .order_by(Document.uploaded_at, Document.id)
    )
    return [(row.id, row.title, row.ai) for row in rows if row.ai]


async def mark_summary_stale(session: AsyncSession, document: Document, reason: str) -> None:
    """The case summary quotes the documents it was made from. When one of them leaves (`deleted`)
    or comes back from the pipeline with other text or another pipeline version (`reprocessed`),
    the summary says it no longer matches them: `ai.stale` and `ai.stale_reason`, until the case is
    summarized again; also when it gets a new version (`replaced`), whose text the summary has not
    seen. (Processing again the same text with the same pipeline changes nothing.)"""
    case = await session.get(Case, document.case_id)
    if case is None or not case.ai or case.ai.get("stale"):
        return
    made_from = {
        source.get("document_id"): (source.get("pipeline_version"), source.get("text_sha256"))
        for source in case.ai.get("provenance", {}).get("documents", [])
    }
    if document.id not in made_from:
        return
    if reason == "reprocessed":
        provenance = (document.ai or {}).get("provenance", {})
        if made_from[document.id] == (provenance.get("pipeline_version"), provenance.get("text_sha256")):
            return
    case.ai = {**case.ai, "stale": True, "stale_reason": f"document_{reason}"}
