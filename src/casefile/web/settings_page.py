"""The user's settings: their time zone (docs/web-app.md#time-zones), kept on their account so
that it follows them to every browser. Until they pick one, pages use the browser's own zone,
which static/tz.js keeps in a cookie."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from casefile.auth.dependencies import CurrentPrincipal
from casefile.clock import time_zones
from casefile.request_scope import SessionDep
from casefile.users import service as users
from casefile.web.security import Changer
from casefile.web.templating import render, viewer, zone_of

router = APIRouter(include_in_schema=False)

BROWSER = "browser"  # the form's choice of "my browser's time zone"


@router.get("/app/settings")
async def settings(request: Request, principal: CurrentPrincipal, session: SessionDep) -> HTMLResponse:
    me = await viewer(session, principal)
    context = {
        "zones": sorted(time_zones()),
        "picked": me.time_zone or BROWSER,
        "current": str(zone_of(request, me)),
    }
    return render(request, "settings.html", context, me=me, nav="settings")


@router.post("/app/settings")
async def save_settings(request: Request, principal: Changer, session: SessionDep) -> Response:
    choice = str((await request.form()).get("time_zone") or "")
    await users.set_time_zone(session, principal, None if choice == BROWSER else choice)
    return RedirectResponse("/app/settings?saved=1", status_code=303)
