"""The conflict check page: names (one a line) checked as `POST /conflict-checks` checks them (the
check is stored, `conflict_check.completed` is emitted), hits on a matter the user may not see
shown only as "a matter that exists"; and the user's recent checks (`GET /conflict-checks`: the
checks they may read, redacted the same way)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.auth.permissions import Permission, Principal
from casefile.conflicts import service as conflicts_service
from casefile.conflicts.dependencies import ConflictsRead
from casefile.conflicts.repository import CONFLICT_CHECK_LIST
from casefile.errors import permission_missing
from casefile.listing import build_list_query
from casefile.request_scope import SessionDep
from casefile.web.matters import _lines, conflict_check
from casefile.web.security import Changer
from casefile.web.templating import render, viewer

router = APIRouter(include_in_schema=False)

RECENT = "10"


async def _recent(session: AsyncSession, principal: Principal) -> list[dict[str, Any]]:
    page = await conflicts_service.list_checks(
        session, principal, build_list_query(CONFLICT_CHECK_LIST, {"limit": RECENT})
    )
    recent = [await conflicts_service.dump_for(session, principal, check) for check in page.rows]
    for item in recent:  # dumped for JSON: the time back as a time, to show it
        item["created_at"] = datetime.fromisoformat(item["created_at"].replace("Z", "+00:00"))
    return recent


async def _page(
    request: Request, session: AsyncSession, principal: Principal, names: str, check: Any
) -> HTMLResponse:
    me = await viewer(session, principal)
    context = {"names": names, "check": check, "recent": await _recent(session, principal)}
    return render(request, "conflicts.html", context, me=me, nav="conflicts")


@router.get("/app/conflicts")
async def conflicts(request: Request, principal: ConflictsRead, session: SessionDep) -> HTMLResponse:
    return await _page(request, session, principal, "", None)


@router.post("/app/conflicts")
async def run_check(request: Request, principal: Changer, session: SessionDep) -> HTMLResponse:
    if not principal.can(Permission.READ_CONFLICTS):
        raise permission_missing(Permission.READ_CONFLICTS)
    names = str((await request.form()).get("names") or "")[:20_000]
    check = await conflict_check(session, principal, _lines(names))
    return await _page(request, session, principal, names, check)
