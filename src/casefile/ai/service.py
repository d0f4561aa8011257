"""Requests for AI work through the API: re-process a document, summarize a case."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from casefile.ai import jobs
from casefile.ai.models import AiJob
from casefile.auth.permissions import Principal
from casefile.cases.models import Case
from casefile.config.service import load as load_config
from casefile.documents.models import Document
from casefile.errors import Conflict
from casefile.runtime import Runtime


async def _require_ai_enabled(session: AsyncSession, runtime: Runtime) -> None:
    if not (await load_config(session, runtime.settings)).ai.enabled:
        raise Conflict("AI processing is turned off (ai.enabled in /admin/config)")


async def process_document(
    session: AsyncSession, runtime: Runtime, actor: Principal, document: Document
) -> AiJob:
    await _require_ai_enabled(session, runtime)
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
    return await jobs.enqueue(
        session, runtime, kind="case", case_id=case.id, document_id=None, requested_by=actor.actor_id
    )
