from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from casefile import envelope
from casefile.ai import service
from casefile.ai.models import AiJob
from casefile.ai.schemas import JobOut
from casefile.auth.dependencies import Require, RuntimeDep, SessionDep
from casefile.auth.permissions import Principal
from casefile.envelope import Envelope

router = APIRouter(tags=["ai"])

DocumentsWrite = Annotated[Principal, Depends(Require("write:documents"))]
CasesWrite = Annotated[Principal, Depends(Require("write:cases"))]


def _accepted(job: AiJob) -> JSONResponse:
    return envelope.ok(JobOut.dump(job), status_code=202)


@router.post("/documents/{document_id}/process", response_model=Envelope[JobOut], status_code=202)
async def process_document(
    document_id: str, principal: DocumentsWrite, session: SessionDep, runtime: RuntimeDep
) -> JSONResponse:
    """Run the AI pipeline on the document again (extraction, analysis, embeddings). Answers at
    once; the outcome comes as `ai.processing_*` and `document.processed` events and on the
    document."""
    return _accepted(await service.process_document(session, runtime, principal, document_id))


@router.post("/cases/{case_id}/summarize", response_model=Envelope[JobOut], status_code=202)
async def summarize_case(
    case_id: str, principal: CasesWrite, session: SessionDep, runtime: RuntimeDep
) -> JSONResponse:
    """Summarize the case from its processed documents (extractive, every sentence cited). The
    summary appears as the case's `ai`; `ai.processing_*` events carry the `case_id`."""
    return _accepted(await service.summarize_case(session, runtime, principal, case_id))
