from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query
from fastapi.responses import JSONResponse

from casefile import envelope
from casefile.access.dependencies import (
    CasesWrite,
    CaseToWrite,
    DocumentsRead,
    DocumentsWrite,
    DocumentToWrite,
)
from casefile.access.matter import case_for
from casefile.ai import service
from casefile.ai.repository import JOB_LIST
from casefile.ai.schemas import JobOut, JobStatusOut, ReprocessOut
from casefile.auth.dependencies import AdminPrincipal
from casefile.envelope import Envelope, PageEnvelope
from casefile.listing import ListQuery, list_query
from casefile.models import AiJob
from casefile.request_scope import RuntimeDep, SessionDep

router = APIRouter(tags=["ai"])
# Included under /admin (casefile.admin): administrators only.
admin_router = APIRouter(tags=["ai"])


def _accepted(job: AiJob) -> JSONResponse:
    return envelope.ok(JobOut.dump(job), status_code=202)


@router.post("/documents/{document_id}/process", response_model=Envelope[JobOut], status_code=202)
async def process_document(
    principal: DocumentsWrite, document: DocumentToWrite, session: SessionDep, runtime: RuntimeDep
) -> JSONResponse:
    """Run the AI pipeline on the document again (extraction, analysis, embeddings). Answers at
    once; the outcome comes as `ai.processing_*` and `document.processed` events and on the
    document."""
    return _accepted(await service.process_document(session, runtime, principal, document))


@router.post("/cases/{case_id}/summarize", response_model=Envelope[JobOut], status_code=202)
async def summarize_case(
    principal: CasesWrite, _: DocumentsRead, case: CaseToWrite, session: SessionDep, runtime: RuntimeDep
) -> JSONResponse:
    """Summarize the case from its processed documents (extractive, every sentence cited); needs
    `read:documents` too, as the summary quotes them. The summary appears as the case's `ai`;
    `ai.processing_*` events carry the `case_id`."""
    return _accepted(await service.summarize_case(session, runtime, principal, case))


JobListQuery = Annotated[ListQuery, Depends(list_query(JOB_LIST))]


@router.get("/jobs/{job_id}", response_model=Envelope[JobStatusOut])
async def get_job(job_id: str, principal: DocumentsRead, session: SessionDep) -> JSONResponse:
    """An AI job as it stands: status, attempts, when it started and finished, its last error."""
    return envelope.ok(JobStatusOut.dump(await service.job_for(session, principal, job_id)))


@router.get("/cases/{case_id}/jobs", response_model=PageEnvelope[JobStatusOut])
async def list_case_jobs(
    case_id: str, principal: DocumentsRead, session: SessionDep, query: JobListQuery
) -> JSONResponse:
    """The case's AI jobs (its documents' and its summaries'), newest first; filters `status`,
    `kind`, `document_id`."""
    case = await case_for(session, principal, case_id)
    return envelope.listed(await service.list_jobs(session, case, query), query, JobStatusOut.dump)


@admin_router.post("/ai/reprocess", response_model=Envelope[ReprocessOut], status_code=202)
async def reprocess_documents(
    principal: AdminPrincipal,
    session: SessionDep,
    runtime: RuntimeDep,
    status: Annotated[
        Literal["skipped", "failed"],
        Query(description="`skipped`: arrived while AI was off (or without OCR); `failed`: gave up"),
    ],
    limit: Annotated[int, Query(ge=1, le=service.REPROCESS_BATCH)] = service.REPROCESS_BATCH,
) -> JSONResponse:
    """Queue the documents in `status` for the AI pipeline again, oldest first, at most `limit` per
    call; `remaining` says how many are left (call again until it is 0). Documents in the trash,
    or in a case in the trash, are left alone."""
    queued, remaining = await service.reprocess(session, runtime, principal, status, limit)
    return envelope.ok(ReprocessOut(queued=queued, remaining=remaining).model_dump(), status_code=202)
