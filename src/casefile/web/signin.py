"""Signing in and out of the web app: the password form (the login rate limit of
`POST /auth/login` applies), the first-run hint when no administrator exists yet, and sign-out,
which revokes the login session like `POST /auth/logout`."""

from __future__ import annotations

import secrets
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from casefile.auth import browser, service
from casefile.auth.dependencies import LimitByClientIp
from casefile.errors import AuthError, csrf_refused
from casefile.request_scope import RuntimeDep, SessionDep
from casefile.users.service import NO_ADMINISTRATOR, administrator_exists
from casefile.web.security import Changer, session_cookie_headers
from casefile.web.templating import render

router = APIRouter(include_in_schema=False)

FORM_COOKIE = "casefile_signin"
MAX_EMAIL = 320
MAX_PASSWORD = 1024


def safe_next(target: str | None) -> str:
    """Only a page of this app, never another site (`//evil.example`, `/app\\..`)."""
    if target and browser.applies_to(target.split("?")[0]) and "\\" not in target and "//" not in target:
        return target
    return "/app"


async def _form(
    request: Request,
    session: SessionDep,
    *,
    next_page: str,
    email: str = "",
    error: str = "",
    status: int = 200,
) -> HTMLResponse:
    nonce = browser.new_form_nonce()
    setup = None if await administrator_exists(session) else NO_ADMINISTRATOR
    context = {"nonce": nonce, "next_page": next_page, "email": email, "error": error, "setup": setup}
    page = render(request, "sign_in.html", context, status_code=status)
    page.set_cookie(
        FORM_COOKIE,
        nonce,
        max_age=3600,
        path="/app/sign-in",
        secure=request.url.scheme == "https",
        httponly=True,
        samesite="lax",
    )
    return page


@router.get("/app/sign-in", dependencies=[LimitByClientIp])
async def sign_in_form(
    request: Request, session: SessionDep, next: Annotated[str | None, Query(max_length=500)] = None
) -> HTMLResponse:
    return await _form(request, session, next_page=safe_next(next))


@router.post("/app/sign-in", dependencies=[LimitByClientIp])
async def sign_in(request: Request, session: SessionDep, runtime: RuntimeDep) -> Response:
    form = await request.form()
    email, password = str(form.get("email") or ""), str(form.get("password") or "")
    given, expected = str(form.get("form_token") or ""), request.cookies.get(FORM_COOKIE) or ""
    if not expected or not secrets.compare_digest(given.encode(), expected.encode()):
        raise csrf_refused()
    next_page = safe_next(str(form.get("next") or ""))
    if not email or not password or len(email) > MAX_EMAIL or len(password) > MAX_PASSWORD:
        return await _form(
            request,
            session,
            next_page=next_page,
            email=email[:MAX_EMAIL],
            error="Enter your email and password",
        )
    try:
        ticket = await browser.sign_in(session, runtime, email=email, password=password)
    except AuthError as exc:
        # The failed attempt is already recorded (and committed) in the audit trail.
        return await _form(
            request, session, next_page=next_page, email=email, error=exc.description, status=exc.status_code
        )
    response = RedirectResponse(next_page, status_code=303)
    secure = request.url.scheme == "https"
    response.raw_headers.extend(session_cookie_headers(ticket.seal(runtime), secure=secure))
    response.delete_cookie(FORM_COOKIE, path="/app/sign-in", secure=secure, httponly=True, samesite="lax")
    return response


@router.post("/app/sign-out")
async def sign_out(
    request: Request, principal: Changer, session: SessionDep, runtime: RuntimeDep
) -> Response:
    # As `POST /auth/logout`: the login session is revoked, `user.logout` emitted.
    await service.logout(session, runtime, principal)
    response = RedirectResponse("/app/sign-in?signed_out=1", status_code=303)
    response.raw_headers.extend(session_cookie_headers(None, secure=request.url.scheme == "https"))
    return response
