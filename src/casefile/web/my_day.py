"""My day: my open tasks (those due within 14 days first, overdue at the top), and the matters
opened most recently, through the same services and rules as `GET /tasks` and `GET /cases`."""

from __future__ import annotations

from datetime import timedelta

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from casefile.access.dependencies import CasesRead
from casefile.cases import service as cases_service
from casefile.cases.repository import cases_by_id
from casefile.clock import utcnow
from casefile.listing import build_list_query
from casefile.request_scope import SessionDep
from casefile.tasks import service as tasks_service
from casefile.tasks.repository import TASK_LIST
from casefile.web.templating import render, viewer

router = APIRouter(include_in_schema=False)

SOON_DAYS = 14
RECENT = 5


@router.get("/")
async def root() -> RedirectResponse:
    return RedirectResponse("/app", status_code=307)


@router.get("/app")
async def my_day(request: Request, principal: CasesRead, session: SessionDep) -> HTMLResponse:
    me = await viewer(session, principal)
    today = utcnow().date()
    mine = build_list_query(
        TASK_LIST, {"assignee_id": "me", "status": "open", "sort": "due_at", "order": "asc", "limit": "100"}
    )
    tasks = (await tasks_service.list_tasks(session, principal, mine)).rows
    soon = [t for t in tasks if t.due_date is not None and t.due_date <= today + timedelta(days=SOON_DAYS)]
    later = [t for t in tasks if t not in soon]
    recent = await cases_service.newest_cases(session, principal, RECENT)
    matters = await cases_by_id(session, {t.case_id for t in tasks})
    context = {"soon": soon, "later": later, "recent": recent, "matters": matters}
    return render(request, "my_day.html", context, me=me, nav="my-day")
