"""Rendering a page: the Jinja2 templates of the package (autoescaped), and what every page
needs (who is signed in, the CSRF token, the fingerprinted static files)."""

from __future__ import annotations

from datetime import UTC, date, datetime, tzinfo
from typing import Any
from zoneinfo import ZoneInfo

from fastapi import Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, PackageLoader, StrictUndefined, pass_context, select_autoescape
from jinja2.runtime import Context
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.auth.browser import csrf_token
from casefile.auth.permissions import Permission, Principal
from casefile.billing import time_service
from casefile.clock import time_zones, utcnow
from casefile.models import User
from casefile.request_scope import runtime_of
from casefile.web.assets import static_url

# The browser's own time zone (docs/web-app.md#time-zones): an IANA name in this cookie, set by
# static/tz.js. The zone a user picks is kept on their account and comes first.
TZ_COOKIE = "casefile_tz"


def zone_of(request: Request, me: Viewer | None = None) -> tzinfo:
    """The zone a page is shown in: the one picked on the account; else the browser's (its
    cookie), if it names one; else UTC."""
    for name in (me.time_zone if me else None, request.cookies.get(TZ_COOKIE)):
        if name and name in time_zones():
            return ZoneInfo(name)
    return UTC


@pass_context
def _when(context: Context, value: datetime | date | None) -> str:
    """A date, or a time in the user's time zone, with the zone's abbreviation."""
    if value is None:
        return ""
    if isinstance(value, datetime):
        local = value.astimezone(context.get("zone") or UTC)
        return local.strftime("%Y-%m-%d %H:%M ") + (local.tzname() or "")
    return value.isoformat()


def _duration(seconds: int) -> str:
    """Seconds as H:MM:SS (a timer's elapsed time)."""
    minutes, second = divmod(max(int(seconds), 0), 60)
    hours, minute = divmod(minutes, 60)
    return f"{hours}:{minute:02d}:{second:02d}"


def _label(value: str | None) -> str:
    return (value or "").replace("_", " ").capitalize()


_ENV = Environment(
    loader=PackageLoader("casefile.web", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_ENV.globals["static_url"] = static_url
_ENV.filters["when"] = _when
_ENV.filters["label"] = _label
_ENV.filters["duration"] = _duration


class Viewer:
    """The signed-in user as the templates see them."""

    def __init__(self, principal: Principal, user: User | None) -> None:
        self.principal = principal
        self.name = user.name if user else principal.id
        self.email = user.email if user else ""
        self.role = principal.role or ""
        self.time_zone = user.time_zone if user else None
        # The header's timers (billing.time_service.visible_timers), for those who record time.
        self.timers: list[dict[str, Any]] = []

    def can(self, permission: str) -> bool:
        return self.principal.can(Permission(permission))


async def viewer(session: AsyncSession, principal: Principal) -> Viewer:
    me = Viewer(principal, await session.get(User, principal.id))
    if me.can(Permission.WRITE_BILLING):
        me.timers = [
            {
                "id": timer.id,
                "case_id": case.id,
                "case_title": case.title,
                "description": timer.description,
                "running": timer.running_since is not None,
                "elapsed": time_service.elapsed(timer),
            }
            for timer, case in await time_service.visible_timers(session, principal)
        ]
    return me


def render(
    request: Request,
    template: str,
    context: dict[str, Any],
    *,
    me: Viewer | None = None,
    status_code: int = 200,
    nav: str = "",
) -> HTMLResponse:
    csrf = None
    if me is not None and me.principal.session_id is not None:
        csrf = csrf_token(runtime_of(request), me.principal.session_id)
    zone = zone_of(request, me)
    page = {
        "request": request,
        "me": me,
        "csrf": csrf,
        "nav": nav,
        "zone": zone,
        "today": utcnow().astimezone(zone).date(),
        **context,
    }
    html = _ENV.get_template(template).render(page)
    return HTMLResponse(html, status_code=status_code)


def render_fragment(template: str, context: dict[str, Any], *, status_code: int = 200) -> HTMLResponse:
    return HTMLResponse(_ENV.get_template(template).render(**context), status_code=status_code)
