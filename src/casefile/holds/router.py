from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from casefile import envelope
from casefile.access.dependencies import CasesRead, CasesWrite
from casefile.access.matter import Level, case_for
from casefile.auth.dependencies import AdminPrincipal
from casefile.envelope import Envelope, PageEnvelope
from casefile.holds import service
from casefile.holds.repository import HOLD_LIST
from casefile.holds.schemas import HoldCreate, HoldOut
from casefile.listing import ListQuery, list_query
from casefile.request_scope import SessionDep

router = APIRouter(tags=["legal holds"])

HoldListQuery = Annotated[ListQuery, Depends(list_query(HOLD_LIST))]

# A handler with a body or a query string loads its path's row itself: see auth.dependencies.


@router.post("/cases/{case_id}/holds", response_model=Envelope[HoldOut], status_code=201)
async def place_hold(
    case_id: str, body: HoldCreate, principal: CasesWrite, session: SessionDep
) -> JSONResponse:
    """Place a legal hold on the case (needs `manage` on it). Until an administrator releases it,
    deleting or purging the case or its documents answers 409 `LEGAL_HOLD`, for everyone.
    Emits `case.hold_placed`."""
    case = await case_for(session, principal, case_id, Level.MANAGE)
    return envelope.created(HoldOut.dump(await service.place_hold(session, principal, case, body)))


@router.get("/cases/{case_id}/holds", response_model=PageEnvelope[HoldOut])
async def list_holds(
    case_id: str, principal: CasesRead, session: SessionDep, query: HoldListQuery
) -> JSONResponse:
    """The case's legal holds, active and released, newest first by default."""
    case = await case_for(session, principal, case_id)
    return envelope.listed(await service.list_holds(session, case, query), query, HoldOut.dump)


@router.post("/holds/{hold_id}/release", response_model=Envelope[HoldOut])
async def release_hold(hold_id: str, admin: AdminPrincipal, session: SessionDep) -> JSONResponse:
    """Release a legal hold (administrators only). Emits `case.hold_released`."""
    return envelope.ok(HoldOut.dump(await service.release_hold(session, admin, hold_id)))
