"""`GET /admin/audit` (mounted in the administrators' area, `casefile.admin`). A case's own trail,
`GET /cases/{case_id}/audit`, is a case endpoint (`casefile.cases.router`)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from casefile import envelope
from casefile.audit import service
from casefile.audit.dependencies import AuditPage, TrailFilters
from casefile.audit.schemas import AuditEntryOut
from casefile.envelope import CursorPageEnvelope
from casefile.request_scope import SessionDep

router = APIRouter(prefix="/audit", tags=["audit"])


@router.get("", response_model=CursorPageEnvelope[AuditEntryOut])
async def list_audit(session: SessionDep, filters: TrailFilters, page: AuditPage) -> JSONResponse:
    """The audit trail, newest first, filtered by actor, case, action and time; pages follow
    `meta.pagination.next_cursor`."""
    items, next_cursor = await service.list_entries(session, filters, page)
    return envelope.cursor_paginated(items, limit=page.limit, next_cursor=next_cursor)
