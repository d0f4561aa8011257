from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from casefile import envelope
from casefile.conflicts import service
from casefile.conflicts.dependencies import ConflictsRead
from casefile.conflicts.repository import CONFLICT_CHECK_LIST
from casefile.conflicts.schemas import ConflictCheckCreate, ConflictCheckOut
from casefile.envelope import Envelope, PageEnvelope
from casefile.listing import ListQuery, Projection, fields_query, list_query, project
from casefile.request_scope import SessionDep

router = APIRouter(prefix="/conflict-checks", tags=["conflict checks"])

CheckListQuery = Annotated[ListQuery, Depends(list_query(CONFLICT_CHECK_LIST))]
CheckFields = Annotated[Projection | None, Depends(fields_query(CONFLICT_CHECK_LIST.output_fields))]


@router.post("", response_model=Envelope[ConflictCheckOut], status_code=201)
async def run_check(body: ConflictCheckCreate, principal: ConflictsRead, session: SessionDep) -> JSONResponse:
    """Search every contact name and alias, every party of every case (closed and archived ones
    too) and every client name for `names`, fuzzily. The check is stored. A hit on a case the
    caller may not see has `visible: false` and only `case_id`, `score` and `source`. Emits
    `conflict_check.completed`."""
    check = await service.create_check(session, principal, body.names, body.case_id)
    return envelope.created(await service.dump_for(session, principal, check))


@router.get("", response_model=PageEnvelope[ConflictCheckOut])
async def list_checks(principal: ConflictsRead, session: SessionDep, query: CheckListQuery) -> JSONResponse:
    """Stored checks, newest first; filters `case_id` and `created_by`."""
    page = await service.list_checks(session, principal, query)
    dumped = [await service.dump_for(session, principal, check) for check in page.rows]
    return envelope.listed_dumped(dumped, page, query)


@router.get("/{check_id}", response_model=Envelope[ConflictCheckOut])
async def get_check(
    check_id: str, principal: ConflictsRead, fields: CheckFields, session: SessionDep
) -> JSONResponse:
    check = await service.get_check(session, principal, check_id)
    return envelope.ok(project(await service.dump_for(session, principal, check), fields))
