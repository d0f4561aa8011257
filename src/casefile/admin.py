"""The `/admin` area: every route in it needs an administrator's access token (API keys never
qualify, docs/api-conventions.md#permissions). The check runs for unknown `/admin` paths and wrong
methods too, so that only administrators learn which admin endpoints exist; an administrator gets
404 for an unknown one and 405 for a wrong method (`routing.py`)."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse
from sqlalchemy import select

from casefile import envelope
from casefile.access.matter import ensure_outside_walls, outside_walls
from casefile.ai.router import admin_router as ai_admin_router
from casefile.api_keys.router import router as api_keys_router
from casefile.audit import proofs
from casefile.audit import service as audit
from casefile.audit.dependencies import AuditPage, TrailFilters
from casefile.audit.schemas import AuditEntryOut, InclusionProofOut
from casefile.auth.dependencies import AdminPrincipal, Require, require_admin
from casefile.auth.permissions import Permission, Principal
from casefile.config.router import router as config_router
from casefile.envelope import CursorPageEnvelope, Envelope
from casefile.groups.router import router as groups_router
from casefile.models import AuditEntry
from casefile.query_parameters import QueryCheck
from casefile.request_scope import SessionDep
from casefile.routing import AnyMethodRoute, unrouted_error
from casefile.trash.router import router as trash_router
from casefile.webhooks.router import router as webhooks_router

audit_router = APIRouter(prefix="/audit", tags=["audit"])
# The log's inclusion proof shows its entry: mounted by `casefile.app` beside the other log
# endpoints (administrators and `read:audit` keys), here because it too hides what walls hide.
log_entry_router = APIRouter(prefix="/audit", tags=["audit"])
AuditReader = Annotated[Principal, Depends(Require(Permission.READ_AUDIT))]


@audit_router.get("", response_model=CursorPageEnvelope[AuditEntryOut])
async def list_audit(
    admin: AdminPrincipal, session: SessionDep, filters: TrailFilters, page: AuditPage
) -> JSONResponse:
    """The audit trail, newest first, filtered by actor, case, action and time; pages follow
    `meta.pagination.next_cursor`. Entries about a case the administrator is walled off from are
    left out (docs/api-conventions.md#administrators-behind-walls)."""
    readable = outside_walls(admin, AuditEntry.case_id)
    items, next_cursor = await audit.list_entries(session, replace(filters, readable=readable), page)
    return envelope.cursor_paginated(items, limit=page.limit, next_cursor=next_cursor)


@log_entry_router.get("/entries/{entry_id}/inclusion-proof", response_model=Envelope[InclusionProofOut])
async def inclusion_proof(
    entry_id: str,
    reader: AuditReader,
    session: SessionDep,
    tree_size: Annotated[int | None, Query(ge=1, le=2**62, description="Default: the newest head")] = None,
) -> JSONResponse:
    """The entry, and the proof (RFC 9162 audit path) that it is in the tree of a signed head. An
    entry about a case the caller is walled off from is 404, as one that does not exist."""
    case_id = await session.scalar(select(AuditEntry.case_id).where(AuditEntry.id == entry_id))
    await ensure_outside_walls(session, reader, case_id, "Audit entry not found")
    return envelope.ok(await proofs.inclusion_proof(session, entry_id, tree_size))


def build_admin_router() -> APIRouter:
    router = APIRouter(prefix="/admin", dependencies=[Depends(require_admin)])
    # The query-string check runs after the administrator check: others learn nothing here.
    domain_routers = (
        api_keys_router,
        webhooks_router,
        config_router,
        groups_router,
        audit_router,
        trash_router,
        ai_admin_router,
    )
    for domain_router in domain_routers:
        router.include_router(domain_router, dependencies=[QueryCheck])

    # Last, so that it only takes what no admin route took: an unknown path, or a wrong method
    # (it takes every method, so a wrong one is answered here, after the administrator check).
    async def unrouted_admin_request(request: Request) -> None:
        raise unrouted_error(request)

    router.add_api_route(
        "/{path:path}",
        unrouted_admin_request,
        include_in_schema=False,
        route_class_override=AnyMethodRoute,
    )

    return router
