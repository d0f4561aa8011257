"""The header's timer: start (on a matter), pause, resume and stop the signed-in user's timers
through the services of `POST /timers` and `/timers/{id}/...` (one runs at a time; a timer is a
database row, so it survives a restart). Stopping makes a draft time entry, shown on the
matter's time tab."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response
from pydantic import ValidationError

from casefile.access.matter import Level, case_for
from casefile.auth.permissions import Permission
from casefile.billing import time_service
from casefile.billing.schemas import TimerStart
from casefile.error_handlers import validation_details
from casefile.errors import NotFound, ValidationFailed
from casefile.request_scope import RuntimeDep, SessionDep
from casefile.web.billing_forms import require, text
from casefile.web.security import Changer
from casefile.web.signin import safe_next

router = APIRouter(include_in_schema=False)


@router.post("/app/timers")
async def start(request: Request, principal: Changer, session: SessionDep) -> Response:
    """Start a timer on a matter (the running one, if any, pauses), as `POST /timers`."""
    require(principal, Permission.WRITE_BILLING)
    form = await request.form()
    try:
        body = TimerStart(case_id=text(form, "case_id"), description=text(form, "description"))
    except ValidationError as exc:
        raise ValidationFailed(details=validation_details(exc.errors())) from None
    case = await case_for(session, principal, body.case_id, Level.WRITE)
    await time_service.start_timer(session, principal, case, body.description)
    return RedirectResponse(safe_next(text(form, "next") or f"/app/matters/{case.id}/time"), status_code=303)


@router.post("/app/timers/{timer_id}/{action}")
async def change(
    *,
    request: Request,
    timer_id: str,
    action: str,
    principal: Changer,
    session: SessionDep,
    runtime: RuntimeDep,
) -> Response:
    """Pause, resume or stop one of the user's own timers (anyone else's is "not found")."""
    require(principal, Permission.WRITE_BILLING)
    timer = await time_service.timer_for(session, principal, timer_id)
    form = await request.form()
    back = safe_next(text(form, "next") or f"/app/matters/{timer.case_id}/time")
    if action == "pause":
        await time_service.pause_timer(timer)
    elif action == "resume":
        await time_service.resume_timer(session, timer)
    elif action == "stop":
        entry = await time_service.stop_timer(session, runtime.settings, principal, timer)
        back = f"/app/matters/{entry.case_id}/time?recorded={entry.id}"
    else:
        raise NotFound("Not found")
    return RedirectResponse(back, status_code=303)
