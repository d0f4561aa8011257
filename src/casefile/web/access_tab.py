"""The matter's access tab, for administrators (docs/web-app.md): the restricted flag, grants and
walls, read and replaced through `GET`/`PUT /cases/{id}/access`'s services (`read_case_access`,
`set_case_access`: the same checks, audit entry and `case.access_changed` event). Each form
changes one thing; the page rebuilds the whole settings from the current ones and that change."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.access.matter import Level, access_settings_case, case_for
from casefile.auth.dependencies import CurrentPrincipal
from casefile.auth.permissions import Principal
from casefile.cases import service as cases_service
from casefile.cases.schemas import CaseAccessBody
from casefile.error_handlers import validation_details
from casefile.errors import ValidationFailed, admin_required
from casefile.groups.repository import GROUP_LIST
from casefile.groups.service import list_groups
from casefile.listing import build_list_query
from casefile.request_scope import SessionDep
from casefile.users.service import all_users
from casefile.web.matter import matter_page
from casefile.web.security import Changer
from casefile.web.templating import viewer

router = APIRouter(include_in_schema=False)

ACTIONS = ("access", "add_grant", "remove_grant", "add_wall", "remove_wall")


def _administrator(principal: Principal) -> None:
    if not principal.is_admin_user:
        raise admin_required()


async def _subjects(session: AsyncSession) -> dict[str, str]:
    """Users and groups by `type:id`, with the names shown for them."""
    users = {f"user:{u.id}": f"{u.name} ({u.email})" for u in await all_users(session)}
    groups = await list_groups(session, build_list_query(GROUP_LIST, {"limit": "100"}))
    return users | {f"group:{g.id}": f"Group: {g.name}" for g in groups.rows}


async def _page(
    request: Request,
    session: AsyncSession,
    principal: Principal,
    case_id: str,
    *,
    error: str = "",
    status: int = 200,
) -> HTMLResponse:
    # The matter page itself needs sight of the matter (an administrator walled off it changes its
    # access through `PUT /cases/{id}/access`, which allows that).
    case = await case_for(session, principal, case_id, Level.READ)
    settings_case = await access_settings_case(session, principal, case_id)
    # Read as `GET /cases/{id}/access` reads (audited), except after a refused change, whose
    # transaction was rolled back: the form's answer then, not a new read.
    read = cases_service.case_access if error else cases_service.read_case_access
    settings = await read(session, settings_case)
    context = {"settings": settings, "subjects": await _subjects(session), "error": error}
    me = await viewer(session, principal)
    return await matter_page(request, session, me, case, tab="access", context=context, status_code=status)


@router.get("/app/matters/{case_id}/access")
async def access(
    request: Request, case_id: str, principal: CurrentPrincipal, session: SessionDep
) -> HTMLResponse:
    _administrator(principal)
    return await _page(request, session, principal, case_id)


def _changed(settings: dict[str, Any], form: Any) -> dict[str, Any]:
    """The settings after the form's one change."""
    action = str(form.get("action") or "")
    subject_type, _, subject_id = str(form.get("subject") or "").partition(":")
    subject = {"subject_type": subject_type, "subject_id": subject_id}

    def same(entry: dict[str, Any]) -> bool:
        return (entry["subject_type"], entry["subject_id"]) == (subject_type, subject_id)

    body = dict(settings)
    if action == "access":
        body["access"] = str(form.get("access") or "")
    elif action == "add_grant":
        body["grants"] = [*settings["grants"], subject | {"level": str(form.get("level") or "")}]
    elif action == "remove_grant":
        body["grants"] = [g for g in settings["grants"] if not same(g)]
    elif action == "add_wall":
        body["walls"] = [
            *settings["walls"],
            subject | {"reason": str(form.get("reason") or "").strip() or None},
        ]
    elif action == "remove_wall":
        body["walls"] = [w for w in settings["walls"] if not same(w)]
    else:
        raise ValidationFailed.on("action", f"Must be one of {', '.join(ACTIONS)}")
    return body


@router.post("/app/matters/{case_id}/access")
async def change_access(request: Request, case_id: str, principal: Changer, session: SessionDep) -> Response:
    _administrator(principal)
    case = await access_settings_case(session, principal, case_id)
    form = await request.form()
    try:
        body = CaseAccessBody.model_validate(_changed(await cases_service.case_access(session, case), form))
        await cases_service.set_case_access(session, principal, case, body)
    except (ValidationFailed, ValidationError) as exc:
        await session.rollback()
        details = validation_details(exc.errors()) if isinstance(exc, ValidationError) else exc.details or []
        message = "; ".join(f"{d.field}: {d.message}" for d in details) or "Not saved"
        return await _page(request, session, principal, case_id, error=message, status=422)
    return RedirectResponse(f"/app/matters/{case_id}/access?saved=1", status_code=303)
