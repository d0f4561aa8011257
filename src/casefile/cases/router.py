from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from casefile import envelope
from casefile.auth.dependencies import SessionDep
from casefile.auth.visibility import IdOnlyOut
from casefile.cases import repository, service
from casefile.cases.dependencies import CaseInPath, CasesDelete, CasesRead, CasesWrite
from casefile.cases.repository import CASE_LIST
from casefile.cases.schemas import AssigneeAdd, CaseCreate, CaseOut, CaseUpdate
from casefile.envelope import DeletedOut, Envelope, PageEnvelope
from casefile.listing import ListQuery, fields_query, list_query, project

router = APIRouter(prefix="/cases", tags=["cases"])

CaseListQuery = Annotated[ListQuery, Depends(list_query(CASE_LIST))]
CaseFields = Annotated[list[str] | None, Depends(fields_query(CASE_LIST.output_fields))]

# A handler with a body or a query string loads its path's row itself: see auth.dependencies.


@router.get("", response_model=PageEnvelope[CaseOut])
async def list_cases(principal: CasesRead, session: SessionDep, query: CaseListQuery) -> JSONResponse:
    """List cases: paginated, sortable, filterable, with full-text `search`."""
    return envelope.listed(
        await service.list_cases(session, principal, query),
        query,
        lambda case: CaseOut.dump_for(case, principal),
    )


@router.post("", response_model=Envelope[CaseOut | IdOnlyOut], status_code=201)
async def create_case(body: CaseCreate, principal: CasesWrite, session: SessionDep) -> JSONResponse:
    """Create a case; `case_number` is assigned (`YYYY-NNNNNN`) when omitted. Emits `case.created`."""
    return envelope.created(CaseOut.dump_for(await service.create_case(session, principal, body), principal))


@router.get("/{case_id}", response_model=Envelope[CaseOut])
async def get_case(principal: CasesRead, fields: CaseFields, case: CaseInPath) -> JSONResponse:
    return envelope.ok(project(CaseOut.dump_for(case, principal), fields))


@router.put("/{case_id}", response_model=Envelope[CaseOut | IdOnlyOut])
@router.patch("/{case_id}", response_model=Envelope[CaseOut | IdOnlyOut])
async def update_case(
    case_id: str, body: CaseUpdate, principal: CasesWrite, session: SessionDep
) -> JSONResponse:
    """Update any subset of the writable fields (PUT and PATCH alike). Emits `case.updated`, and
    `case.status_changed` when the status moves."""
    case = await repository.get_case(session, case_id)
    return envelope.ok(CaseOut.dump_for(await service.update_case(session, principal, case, body), principal))


@router.delete("/{case_id}", response_model=Envelope[DeletedOut])
async def delete_case(principal: CasesDelete, case: CaseInPath, session: SessionDep) -> JSONResponse:
    """Move the case and its documents to the trash (restored or purged in `/admin/trash`).
    Emits `document.deleted` for each document and `case.deleted`. 409 `LEGAL_HOLD` while the
    case is under a legal hold."""
    await service.delete_case(session, principal, case)
    return envelope.deleted(case.id)


@router.post("/{case_id}/assignees", response_model=Envelope[CaseOut | IdOnlyOut])
async def add_assignee(
    case_id: str, body: AssigneeAdd, principal: CasesWrite, session: SessionDep
) -> JSONResponse:
    """Assign a user to the case. Emits `case.assigned`."""
    case = await repository.get_case(session, case_id)
    updated = await service.add_assignee(session, principal, case, body.user_id)
    return envelope.ok(CaseOut.dump_for(updated, principal))


@router.delete("/{case_id}/assignees/{user_id}", response_model=Envelope[CaseOut | IdOnlyOut])
async def remove_assignee(
    user_id: str, principal: CasesWrite, case: CaseInPath, session: SessionDep
) -> JSONResponse:
    """Remove an assignee. Emits `case.updated` with the change to `assigned_to`."""
    updated = await service.remove_assignee(session, principal, case, user_id)
    return envelope.ok(CaseOut.dump_for(updated, principal))
