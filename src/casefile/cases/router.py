from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from fastapi.responses import JSONResponse

from casefile import envelope
from casefile.auth.dependencies import Require, RuntimeDep, SessionDep
from casefile.auth.permissions import Principal
from casefile.cases import service
from casefile.cases.repository import CASE_LIST
from casefile.cases.schemas import AssigneeAdd, CaseCreate, CaseOut, CaseUpdate
from casefile.envelope import DeletedOut, Envelope, PageEnvelope
from casefile.listing import ListQuery, list_query, parse_fields, project

router = APIRouter(prefix="/cases", tags=["cases"])

CasesRead = Annotated[Principal, Depends(Require("read:cases"))]
CasesWrite = Annotated[Principal, Depends(Require("write:cases"))]
CasesDelete = Annotated[Principal, Depends(Require("delete:cases"))]
CaseListQuery = Annotated[ListQuery, Depends(list_query(CASE_LIST))]
FieldsParam = Annotated[str | None, Query(description="Comma-separated names of the fields to return")]


@router.get("", response_model=PageEnvelope[CaseOut])
async def list_cases(_: CasesRead, session: SessionDep, query: CaseListQuery) -> JSONResponse:
    """List cases: paginated, sortable, filterable, with full-text `search`."""
    cases, total = await service.list_cases(session, query)
    items = [project(CaseOut.dump(c), query.fields) for c in cases]
    return envelope.paginated(items, page=query.page, limit=query.limit, total=total)


@router.post("", response_model=Envelope[CaseOut], status_code=201)
async def create_case(body: CaseCreate, principal: CasesWrite, session: SessionDep) -> JSONResponse:
    """Create a case; `case_number` is assigned (`YYYY-NNNNNN`) when omitted. Emits `case.created`."""
    return envelope.created(CaseOut.dump(await service.create_case(session, principal, body)))


@router.get("/{case_id}", response_model=Envelope[CaseOut])
async def get_case(
    case_id: str, _: CasesRead, session: SessionDep, fields: FieldsParam = None
) -> JSONResponse:
    selected = parse_fields(fields, CASE_LIST.output_fields)
    return envelope.ok(project(CaseOut.dump(await service.get_case(session, case_id)), selected))


async def _update(case_id: str, body: CaseUpdate, principal: Principal, session: SessionDep) -> JSONResponse:
    return envelope.ok(CaseOut.dump(await service.update_case(session, principal, case_id, body)))


@router.put("/{case_id}", response_model=Envelope[CaseOut])
async def put_case(
    case_id: str, body: CaseUpdate, principal: CasesWrite, session: SessionDep
) -> JSONResponse:
    """Update any subset of the writable fields (same as PATCH). Emits `case.updated`, and
    `case.status_changed` when the status moves."""
    return await _update(case_id, body, principal, session)


@router.patch("/{case_id}", response_model=Envelope[CaseOut])
async def patch_case(
    case_id: str, body: CaseUpdate, principal: CasesWrite, session: SessionDep
) -> JSONResponse:
    """Update any subset of the writable fields."""
    return await _update(case_id, body, principal, session)


@router.delete("/{case_id}", response_model=Envelope[DeletedOut])
async def delete_case(
    case_id: str, principal: CasesDelete, session: SessionDep, runtime: RuntimeDep
) -> JSONResponse:
    """Delete the case with its documents and their content. Emits `document.deleted` for each
    document and `case.deleted`."""
    await service.delete_case(session, runtime, principal, case_id)
    return envelope.deleted(case_id)


@router.post("/{case_id}/assignees", response_model=Envelope[CaseOut])
async def add_assignee(
    case_id: str, body: AssigneeAdd, principal: CasesWrite, session: SessionDep
) -> JSONResponse:
    """Assign a user to the case. Emits `case.assigned`."""
    return envelope.ok(CaseOut.dump(await service.add_assignee(session, principal, case_id, body.user_id)))


@router.delete("/{case_id}/assignees/{user_id}", response_model=Envelope[CaseOut])
async def remove_assignee(
    case_id: str, user_id: str, principal: CasesWrite, session: SessionDep
) -> JSONResponse:
    """Remove an assignee. Emits `case.updated` with the change to `assigned_to`."""
    return envelope.ok(CaseOut.dump(await service.remove_assignee(session, principal, case_id, user_id)))
