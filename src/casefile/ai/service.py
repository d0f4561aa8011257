"""Requests for AI work through the API: re-process a document, summarize a case, follow jobs."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.access.matter import not_trashed, row_in_case
from casefile.ai import jobs
from casefile.ai.repository import JOB_LIST
from casefile.audit import service as audit
from casefile.auth.permissions import Principal
from casefile.config.service import load as load_config
from casefile.errors import Conflict
from casefile.listing import ListQuery, Page, fetch_page
from casefile.models import AiJob, Case, Document, document_not_trashed
from casefile.runtime import Runtime


async def _require_ai_enabled(session: AsyncSession, runtime: Runtime) -> None:
    if not (await load_config(session, runtime.settings)).ai.enabled:
        raise Conflict("AI processing is turned off (ai.enabled in /admin/config)")


async def process_document(
    session: AsyncSession, runtime: Runtime, actor: Principal, document: Document
) -> AiJob:
    await _require_ai_enabled(session, runtime)
    return await _queue_document(session, runtime, actor, document)


async def _queue_document(
    session: AsyncSession, runtime: Runtime, actor: Principal, document: Document
) -> AiJob:
    job = await jobs.enqueue(
        session,
        runtime,
        kind="document",
        case_id=document.case_id,
        document_id=document.id,
        requested_by=actor.actor_id,
    )
    if document.processing_status != "processing":  # a run in progress keeps its status until it ends
        document.processing_status = "pending"
    return job


async def summarize_case(session: AsyncSession, runtime: Runtime, actor: Principal, case: Case) -> AiJob:
    await _require_ai_enabled(session, runtime)
    if not await jobs.has_processed_documents(session, case.id):
        raise Conflict("The case has no processed documents to summarize yet")
    job = await jobs.enqueue(
        session, runtime, kind="case", case_id=case.id, document_id=None, requested_by=actor.actor_id
    )
    # The summary reads every document of the case: recorded with the request's transaction.
    audit.record(session, "case.summarize", resource_type="case", resource_id=case.id, case_id=case.id)
    return job


# Documents whose processing ended without analysis, and can be asked again: `skipped` (AI was off
# when they arrived, or no OCR was installed) and `failed` (attempts used up).
REPROCESSABLE = ("skipped", "failed")
REPROCESS_BATCH = 500


async def reprocess(
    session: AsyncSession, runtime: Runtime, actor: Principal, status: str, limit: int
) -> tuple[int, int]:
    """Queue up to `limit` documents in `status` (oldest first), across every case not in the
    trash; return how many were queued and how many are left in that status. Queued documents
    turn `pending`, so asking again takes the next ones."""
    await _require_ai_enabled(session, runtime)
    matching = (
        select(Document)
        .join(Case, Case.id == Document.case_id)
        .where(Document.processing_status == status, document_not_trashed(), not_trashed())
    )
    documents = (await session.scalars(matching.order_by(Document.id).limit(limit))).all()
    for document in documents:
        await _queue_document(session, runtime, actor, document)
    await session.flush()
    left = await session.scalar(select(func.count()).select_from(matching.subquery()))
    return len(documents), left or 0


async def job_for(session: AsyncSession, principal: Principal, job_id: str) -> AiJob:
    """The job if the caller may see its case (else 404, as for a job that does not exist); a
    job shows what it found in the case's documents (a summary), so the read is recorded."""
    job = await row_in_case(session, principal, AiJob, job_id, not_found="Job not found")
    await audit.record_read(session, "job.read", resource_type="job", resource_id=job.id, case_id=job.case_id)
    return job


async def list_jobs(session: AsyncSession, case: Case, query: ListQuery) -> Page[AiJob]:
    page = await fetch_page(session, JOB_LIST, query, conditions=[AiJob.case_id == case.id])
    await audit.record_read(session, "job.list", resource_type="case", resource_id=case.id, case_id=case.id)
    return page
