from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from casefile import envelope
from casefile.access.dependencies import CaseInPath, CasesDelete, CasesRead, CasesWrite, CaseToWrite
from casefile.access.matter import Level, access_settings_case, case_for
from casefile.access.visibility import IdOnlyOut
from casefile.audit import service as audit
from casefile.audit.dependencies import AuditPage, CaseTrailFilters
from casefile.audit.schemas import AuditEntryOut
from casefile.auth.dependencies import CurrentPrincipal
from casefile.cases import service
from casefile.cases.repository import CASE_LIST
from casefile.cases.schemas import AssigneeAdd, CaseAccessBody, CaseOut, CaseUpdate
from casefile.envelope import CursorPageEnvelope, DeletedOut, Envelope, PageEnvelope
from casefile.listing import CUSTOM_PREFIX, ListQuery, Projection, fields_query, list_query, project
from casefile.query_parameters import query_prefix
from casefile.request_scope import RuntimeDep, SessionDep

router = APIRouter(prefix="/cases", tags=["cases"])

CaseListQuery = Annotated[ListQuery, Depends(list_query(CASE_LIST))]
CaseFields = Annotated[Projection | None, Depends(fields_query(CASE_LIST.output_fields))]

# `POST /cases` is `templates.router.open_case`: a case may be opened from a matter template, which
# composes domains above this one (decision 0018).
# A handler with a body or a query string loads its path's row itself: see auth.dependencies.
# Every case is loaded through access/matter.py: one the caller may not see is 404.


@router.get("", response_model=PageEnvelope[CaseOut])
@query_prefix(CUSTOM_PREFIX)
async def list_cases(
    principal: CasesRead, session: SessionDep, query: CaseListQuery, runtime: RuntimeDep
) -> JSONResponse:
    """List the cases the caller may see: paginated, sortable, filterable (`assigned_to=me` or a
    user id), with full-text `search`. Custom fields: `cf.<name>=a,b` (any of; numbers, decimals
    and dates also `low..high`), `sort=cf.<name>`, `fields=custom_fields{name}`."""
    await service.check_projection(session, query.fields)
    return envelope.listed(
        await service.list_cases(session, principal, query),
        query,
        lambda case: CaseOut.dump_for(case, principal),
    )


@router.get("/{case_id}", response_model=Envelope[CaseOut])
async def get_case(
    principal: CasesRead, fields: CaseFields, case: CaseInPath, session: SessionDep, runtime: RuntimeDep
) -> JSONResponse:
    await service.check_projection(session, fields)
    await service.record_case_read(session, case)
    return envelope.ok(project(CaseOut.dump_for(case, principal), fields))


@router.put("/{case_id}", response_model=Envelope[CaseOut | IdOnlyOut])
@router.patch("/{case_id}", response_model=Envelope[CaseOut | IdOnlyOut])
async def update_case(
    case_id: str, body: CaseUpdate, principal: CasesWrite, session: SessionDep
) -> JSONResponse:
    """Update any subset of the writable fields (PUT and PATCH alike); needs `write` on the case.
    Emits `case.updated`, and `case.status_changed` when the status moves."""
    case = await case_for(session, principal, case_id, Level.WRITE)
    return envelope.ok(CaseOut.dump_for(await service.update_case(session, principal, case, body), principal))


@router.delete("/{case_id}", response_model=Envelope[DeletedOut])
async def delete_case(principal: CasesDelete, case: CaseToWrite, session: SessionDep) -> JSONResponse:
    """Move the case and its documents to the trash (restored or purged in `/admin/trash`); needs
    `write` on the case. Emits `document.deleted` for each document and `case.deleted`. 409
    `LEGAL_HOLD` while the case is under a legal hold."""
    await service.delete_case(session, principal, case)
    return envelope.deleted(case.id)


@router.post("/{case_id}/assignees", response_model=Envelope[CaseOut | IdOnlyOut])
async def add_assignee(
    case_id: str, body: AssigneeAdd, principal: CasesWrite, session: SessionDep
) -> JSONResponse:
    """Assign a user to the case (an assignee has `manage` on it, so on a restricted case this
    needs `manage`). Emits `case.assigned`."""
    case = await case_for(session, principal, case_id, Level.WRITE)
    updated = await service.add_assignee(session, principal, case, body.user_id)
    return envelope.ok(CaseOut.dump_for(updated, principal))


@router.delete("/{case_id}/assignees/{user_id}", response_model=Envelope[CaseOut | IdOnlyOut])
async def remove_assignee(
    user_id: str, principal: CasesWrite, case: CaseToWrite, session: SessionDep
) -> JSONResponse:
    """Remove an assignee. Emits `case.updated` with the change to `assigned_to`."""
    updated = await service.remove_assignee(session, principal, case, user_id)
    return envelope.ok(CaseOut.dump_for(updated, principal))


@router.get("/{case_id}/access", response_model=Envelope[CaseAccessBody])
async def get_case_access(case_id: str, principal: CurrentPrincipal, session: SessionDep) -> JSONResponse:
    """The case's access mode, grants and walls. Needs `manage` on the case, or an administrator
    (who may read the settings even of a case they are walled off from)."""
    case = await access_settings_case(session, principal, case_id)
    return envelope.ok(await service.read_case_access(session, case))


@router.put("/{case_id}/access", response_model=Envelope[CaseAccessBody])
async def set_case_access(
    case_id: str, body: CaseAccessBody, principal: CurrentPrincipal, session: SessionDep
) -> JSONResponse:
    """Replace the case's access mode, grants and walls. Needs `manage` on the case, or an
    administrator. Emits `case.access_changed`."""
    case = await access_settings_case(session, principal, case_id)
    return envelope.ok(await service.set_case_access(session, principal, case, body))


@router.get("/{case_id}/audit", response_model=CursorPageEnvelope[AuditEntryOut])
async def case_audit(
    case_id: str, principal: CasesRead, session: SessionDep, filters: CaseTrailFilters, page: AuditPage
) -> JSONResponse:
    """The case's audit trail, newest first (needs `manage` on the case); pages follow
    `meta.pagination.next_cursor`."""
    await case_for(session, principal, case_id, Level.MANAGE)
    items, next_cursor = await audit.list_case_entries(session, case_id, filters, page)
    return envelope.cursor_paginated(items, limit=page.limit, next_cursor=next_cursor)
