from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from casefile import envelope
from casefile.access.dependencies import CasesWrite
from casefile.auth.dependencies import CurrentPrincipal
from casefile.bulk import service
from casefile.bulk.schemas import BulkJobOut, BulkRequest
from casefile.envelope import Envelope
from casefile.request_scope import SessionDep

router = APIRouter(prefix="/cases/bulk", tags=["cases"])


@router.post("", response_model=Envelope[BulkJobOut], status_code=202)
async def create_bulk_job(body: BulkRequest, principal: CasesWrite, session: SessionDep) -> JSONResponse:
    """Apply one action (`status`, `assign`, `tag`, `set_custom_field`) to up to 1,000 cases, as
    a job: 202 with the job (`Location`); `GET /cases/bulk/{id}` shows its progress and, for each
    case, `succeeded` or `failed` with the error its own request would have answered. Each case is
    changed by the rules of its single-case request, with your access to it, and emits its events."""
    job = await service.create_job(session, principal, body)
    response = envelope.ok(service.dump(job), status_code=202)
    response.headers["Location"] = envelope.location_of({"id": job.id})
    return response


@router.get("/{job_id}", response_model=Envelope[BulkJobOut])
async def get_bulk_job(job_id: str, principal: CurrentPrincipal, session: SessionDep) -> JSONResponse:
    """A bulk job you asked for (an administrator sees every one)."""
    return envelope.ok(service.dump(await service.job_for(session, principal, job_id)))
