"""The matter's deadlines tab: its saved deadlines, and computing deadlines from a rule set with
each one's calculation trace (`POST /cases/{id}/deadlines/compute`'s service): a preview without
saving (a GET: it changes nothing), or saved as tasks."""

from __future__ import annotations

from datetime import date
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError

from casefile.access.dependencies import CaseInPath, CasesRead
from casefile.access.matter import Level, case_for
from casefile.auth.permissions import Permission
from casefile.deadlines import service as deadlines_service
from casefile.deadlines.repository import DEADLINE_LIST
from casefile.deadlines.schemas import ComputeOut, ComputeRequest
from casefile.error_handlers import validation_details
from casefile.errors import ValidationFailed, permission_missing
from casefile.listing import build_list_query
from casefile.request_scope import SessionDep
from casefile.web.errors import refusal_text
from casefile.web.matter import matter_page
from casefile.web.security import Changer
from casefile.web.templating import viewer

router = APIRouter(include_in_schema=False)


def _request(values: dict[str, str], *, save: bool) -> ComputeRequest:
    """`trigger` is "<rule set>::<trigger>" (one choice per rule set's trigger)."""
    rule_set, _, trigger = values.get("trigger", "").partition("::")
    try:
        return ComputeRequest.model_validate(
            {
                "rule_set": rule_set,
                "trigger": trigger,
                "trigger_date": values.get("trigger_date"),
                "save": save,
            }
        )
    except ValidationError as exc:
        raise ValidationFailed(details=validation_details(exc.errors())) from None


@router.get("/app/matters/{case_id}/deadlines")
async def deadlines(
    request: Request, principal: CasesRead, case: CaseInPath, session: SessionDep
) -> HTMLResponse:
    me = await viewer(session, principal)
    saved = await deadlines_service.list_deadlines(
        session, case, build_list_query(DEADLINE_LIST, {"limit": "50"})
    )
    rule_sets = await deadlines_service.rule_sets(session)
    asked = {name: request.query_params.get(name, "") for name in ("trigger", "trigger_date")}
    computed: ComputeOut | None = None
    error = ""
    if asked["trigger"]:
        try:
            computed = await deadlines_service.compute_for_case(
                session, principal, case, _request(asked, save=False)
            )
        except ValidationFailed as exc:
            error = refusal_text(exc)
    context: dict[str, Any] = {
        "saved": saved.rows,
        "rule_sets": rule_sets,
        "asked": asked,
        "computed": computed,
        "error": error,
        "default_date": date.today().isoformat(),
    }
    return await matter_page(request, session, me, case, tab="deadlines", context=context)


@router.post("/app/matters/{case_id}/deadlines")
async def save_deadlines(request: Request, case_id: str, principal: Changer, session: SessionDep) -> Response:
    if not principal.can(Permission.WRITE_CASES):
        raise permission_missing(Permission.WRITE_CASES)
    case = await case_for(session, principal, case_id, Level.WRITE)
    form = await request.form()
    values = {name: str(form.get(name) or "") for name in ("trigger", "trigger_date")}
    await deadlines_service.compute_for_case(session, principal, case, _request(values, save=True))
    return RedirectResponse(f"/app/matters/{case.id}/deadlines?saved=1", status_code=303)
