from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel

from casefile import envelope
from casefile.auth.dependencies import UserPrincipal
from casefile.calendar_feed import service
from casefile.envelope import Envelope
from casefile.request_scope import SessionDep

router = APIRouter(tags=["calendar"])

TOKEN_PATH = "/users/me/calendar-token"  # noqa: S105 (a path, not a secret)


class CalendarTokenOut(BaseModel):
    url: str


class CalendarTokenRevokedOut(BaseModel):
    revoked: bool


@router.post(TOKEN_PATH, response_model=Envelope[CalendarTokenOut], status_code=201)
async def create_calendar_token(
    request: Request, principal: UserPrincipal, session: SessionDep
) -> JSONResponse:
    """A private iCalendar feed URL of the caller's open tasks and deadlines, to subscribe to in a
    calendar app. The URL is the credential: it is shown only here. Asking again makes a new URL
    and the old one stops working."""
    token = await service.new_token(session, principal.id)
    # The feed lives under the same prefix (/api/v1 or /api) as this request.
    prefix = request.url.path.removesuffix(TOKEN_PATH)
    url = f"{request.url.scheme}://{request.url.netloc}{prefix}/calendar/{token}.ics"
    return envelope.created({"url": url})


@router.delete(TOKEN_PATH, response_model=Envelope[CalendarTokenRevokedOut])
async def revoke_calendar_token(principal: UserPrincipal, session: SessionDep) -> JSONResponse:
    """Revoke the caller's feed URL (answers the same when there was none)."""
    await service.revoke_token(session, principal.id)
    return envelope.ok({"revoked": True})


@router.get(
    "/calendar/{token}.ics",
    response_class=Response,
    responses={200: {"content": {"text/calendar": {}}, "description": "An iCalendar (RFC 5545) feed"}},
)
async def calendar_feed(token: str, session: SessionDep) -> Response:
    """The feed (no other credentials: the token in the URL is the credential). 404 once revoked."""
    body = await service.feed(session, token)
    return Response(
        body,
        media_type="text/calendar; charset=utf-8",
        headers={"Cache-Control": "private, no-store", "X-Content-Type-Options": "nosniff"},
    )
