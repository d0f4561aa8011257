"""The matter page: overview (edit; the status buttons offer only the allowed moves) and notes.
Each tab loads the matter as the API does (`access.matter`: a matter the user may not see is a
404, audited as a denial) and calls the same services."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.access.dependencies import CaseInPath, CasesRead
from casefile.access.matter import Level, case_for, level_on
from casefile.audit import service as audit
from casefile.audit.dependencies import AuditPage, CaseTrailFilters
from casefile.auth.permissions import Permission, Principal
from casefile.cases import service as cases_service
from casefile.cases.schemas import PRIORITIES, TRANSITIONS, CaseOut, CaseUpdate
from casefile.conditional import tag_of
from casefile.error_handlers import validation_details
from casefile.errors import ValidationFailed, permission_missing
from casefile.listing import build_list_query
from casefile.models import Case, User
from casefile.notes import service as notes_service
from casefile.notes.repository import NOTE_LIST
from casefile.notes.schemas import NoteCreate
from casefile.request_scope import SessionDep
from casefile.users.service import all_users
from casefile.web.security import Changer
from casefile.web.templating import Viewer, render, viewer

router = APIRouter(include_in_schema=False)

EDITABLE = ("title", "client_name", "case_type", "jurisdiction", "description", "priority")
# What the edit form remembers it was loaded with, to show what someone else changed meanwhile.
TRACKED = (*EDITABLE, "status")
TABS = (
    ("overview", "Overview", ""),
    ("parties", "Parties", "/parties"),
    ("notes", "Notes", "/notes"),
    ("tasks", "Tasks", "/tasks"),
    ("deadlines", "Deadlines", "/deadlines"),
    ("documents", "Documents", "/documents"),
    ("ask", "Ask", "/ask"),
)
# Shown to those with `manage` on the matter only (the API's rule for its audit trail).
MANAGER_TABS = (("activity", "Activity", "/activity"),)
# Shown to those with the permission (docs/billing.md#permissions).
BILLING_TABS = (("time", "Time", "/time", "read:billing"), ("trust", "Trust", "/trust", "read:trust"))
# Shown to administrators only (web/access_tab.py).
ADMIN_TABS = (("access", "Access", "/access"),)


async def people(session: AsyncSession, principal: Principal) -> dict[str, User]:
    """The users by id, for names beside assignees: only for those who may read users (as
    `GET /users` requires); others see "you" or "another user"."""
    if not principal.can(Permission.READ_USERS):
        return {}
    return {user.id: user for user in await all_users(session)}


async def matter_page(
    request: Request,
    session: AsyncSession,
    me: Viewer,
    case: Case,
    *,
    tab: str,
    context: dict[str, Any],
    status_code: int = 200,
    template: str = "",
) -> HTMLResponse:
    level = await level_on(session, me.principal, case)
    can_write = level >= Level.WRITE and me.can(Permission.WRITE_CASES)
    tabs: tuple[tuple[str, str, str], ...] = TABS + MANAGER_TABS if level >= Level.MANAGE else TABS
    tabs += tuple((key, text, suffix) for key, text, suffix, needed in BILLING_TABS if me.can(needed))
    if me.principal.is_admin_user:
        tabs += ADMIN_TABS
    page = {"case": case, "tab": tab, "tabs": tabs, "can_write": can_write, **context}
    return render(
        request, f"matter_{template or tab}.html", page, me=me, nav="matters", status_code=status_code
    )


@router.get("/app/matters/{case_id}")
async def overview(
    request: Request, principal: CasesRead, case: CaseInPath, session: SessionDep
) -> HTMLResponse:
    await cases_service.record_case_read(session, case)
    me = await viewer(session, principal)
    context = await _overview_context(session, principal, case)
    return await matter_page(request, session, me, case, tab="overview", context=context)


def version_of(case: Case, principal: Principal) -> str:
    """The version a form carries: the ETag `GET /api/v1/cases/{id}` gives this user now."""
    return tag_of(CaseOut.dump_for(case, principal))


async def _overview_context(
    session: AsyncSession, principal: Principal, case: Case, **extra: Any
) -> dict[str, Any]:
    """The overview's facts and form: loaded from `case`, with the version and the values it was
    loaded with (`original`, to tell later what someone else changed)."""
    return {
        "moves": sorted(TRANSITIONS[case.status]),
        "errors": {},
        "priorities": PRIORITIES,
        "people": await people(session, principal),
        "version": version_of(case, principal),
        "original": {name: getattr(case, name) or "" for name in TRACKED},
        "values": {name: getattr(case, name) or "" for name in EDITABLE},
        "changes": [],
        "stale": False,
        **extra,
    }


@router.post("/app/matters/{case_id}")
async def edit(request: Request, case_id: str, principal: Changer, session: SessionDep) -> Response:
    if not principal.can(Permission.WRITE_CASES):
        raise permission_missing(Permission.WRITE_CASES)
    case = await case_for(session, principal, case_id, Level.WRITE)
    form = await request.form()
    values = {name: str(form.get(name) or "").strip() for name in EDITABLE}
    if str(form.get("version") or "") != version_of(case, principal):
        # Saved by someone else since this form was loaded (the API's If-Match, as a form): show
        # what they changed beside what this user typed, and let them overwrite or reload.
        original = {name: str(form.get(f"original_{name}") or "") for name in TRACKED}
        changes = [
            (name, original[name], getattr(case, name) or "", values.get(name))
            for name in TRACKED
            if (getattr(case, name) or "") != original[name]
        ]
        me = await viewer(session, principal)
        context = await _overview_context(
            session, principal, case, values=values, changes=changes, stale=True
        )
        return await matter_page(request, session, me, case, tab="overview", context=context, status_code=409)
    try:
        body = CaseUpdate.model_validate(
            {name: (value or None) for name, value in values.items() if name != "title"}
            | {"title": values["title"]}
        )
        await cases_service.update_case(session, principal, case, body)
    except (ValidationFailed, ValidationError) as exc:
        await session.rollback()
        details = validation_details(exc.errors()) if isinstance(exc, ValidationError) else exc.details or []
        me = await viewer(session, principal)
        case = await case_for(session, principal, case_id, Level.READ)
        errors = {d.field: d.message for d in details}
        context = await _overview_context(session, principal, case, errors=errors, values=values)
        return await matter_page(request, session, me, case, tab="overview", context=context, status_code=422)
    return RedirectResponse(f"/app/matters/{case.id}?saved=1", status_code=303)


@router.post("/app/matters/{case_id}/status")
async def change_status(request: Request, case_id: str, principal: Changer, session: SessionDep) -> Response:
    if not principal.can(Permission.WRITE_CASES):
        raise permission_missing(Permission.WRITE_CASES)
    case = await case_for(session, principal, case_id, Level.WRITE)
    status = str((await request.form()).get("status") or "")
    # Not one of the statuses: the same refusal as the API's body validation.
    body = CaseUpdate.model_validate({"status": status or None})
    await cases_service.update_case(session, principal, case, body)
    return RedirectResponse(f"/app/matters/{case.id}", status_code=303)


@router.get("/app/matters/{case_id}/notes")
async def notes(
    request: Request, principal: CasesRead, case: CaseInPath, session: SessionDep
) -> HTMLResponse:
    query = build_list_query(NOTE_LIST, {"limit": "50"})
    page = await notes_service.list_case_notes(session, case, query)
    me = await viewer(session, principal)
    context = {"notes": page.rows, "people": await people(session, principal), "error": ""}
    return await matter_page(request, session, me, case, tab="notes", context=context)


@router.post("/app/matters/{case_id}/notes")
async def add_note(request: Request, case_id: str, principal: Changer, session: SessionDep) -> Response:
    if not principal.can(Permission.WRITE_CASES):
        raise permission_missing(Permission.WRITE_CASES)
    case = await case_for(session, principal, case_id, Level.WRITE)
    text = str((await request.form()).get("body") or "")
    try:
        await notes_service.create_note(session, principal, NoteCreate(body=text), case=case)
    except (ValidationFailed, ValidationError) as exc:
        await session.rollback()
        details = validation_details(exc.errors()) if isinstance(exc, ValidationError) else exc.details or []
        raise ValidationFailed(details=details) from None
    return RedirectResponse(f"/app/matters/{case_id}/notes", status_code=303)


@router.get("/app/matters/{case_id}/activity")
async def activity(
    request: Request,
    *,
    case_id: str,
    principal: CasesRead,
    session: SessionDep,
    filters: CaseTrailFilters,
    page: AuditPage,
) -> HTMLResponse:
    """The matter's audit trail, newest first, for those with `manage` on it (`GET
    /cases/{id}/audit`: the same check, and the read is itself recorded)."""
    case = await case_for(session, principal, case_id, Level.MANAGE)
    entries, next_cursor = await audit.list_case_entries(session, case.id, filters, page)
    me = await viewer(session, principal)
    more = f"/app/matters/{case.id}/activity?" + urlencode({"cursor": next_cursor}) if next_cursor else ""
    context = {"entries": entries, "people": await people(session, principal), "next_url": more}
    return await matter_page(request, session, me, case, tab="activity", context=context)
