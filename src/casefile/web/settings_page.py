"""The user's settings: their time zone (docs/web-app.md#time-zones). Kept in a cookie of the
browser (`casefile_tz`, path `/app`), so no schema change: until the user picks one, static/tz.js
sets it to the browser's own zone."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from casefile.auth.dependencies import CurrentPrincipal
from casefile.errors import ValidationFailed
from casefile.request_scope import SessionDep
from casefile.web.security import Changer
from casefile.web.templating import TZ_COOKIE, render, time_zones, viewer, zone_of

router = APIRouter(include_in_schema=False)

YEAR = 365 * 86_400
BROWSER = "browser"  # the form's choice of "my browser's time zone"


@router.get("/app/settings")
async def settings(request: Request, principal: CurrentPrincipal, session: SessionDep) -> HTMLResponse:
    me = await viewer(session, principal)
    context = {"zones": sorted(time_zones()), "current": str(zone_of(request))}
    return render(request, "settings.html", context, me=me, nav="settings")


@router.post("/app/settings")
async def save_settings(request: Request, principal: Changer) -> Response:
    choice = str((await request.form()).get("time_zone") or "")
    response = RedirectResponse("/app/settings?saved=1", status_code=303)
    secure = request.url.scheme == "https"
    if choice == BROWSER:
        # Forgotten: the browser's own zone is set again by tz.js on the next page.
        response.delete_cookie(TZ_COOKIE, path="/app", secure=secure, samesite="lax")
        return response
    if choice not in time_zones():
        raise ValidationFailed.on("time_zone", "Pick a time zone from the list")
    # Readable by tz.js (not HttpOnly), so that it does not replace the user's choice; it holds
    # nothing secret.
    response.set_cookie(TZ_COOKIE, choice, max_age=YEAR, path="/app", secure=secure, samesite="lax")
    return response
