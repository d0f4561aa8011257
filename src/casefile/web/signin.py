"""Signing in and out of the web app: the password form (the login rate limit of
`POST /auth/login` applies), the first-run hint when no administrator exists yet, and sign-out,
which revokes the login session like `POST /auth/logout`."""

from __future__ import annotations

import secrets
from typing import Annotated
from urllib.parse import urljoin, urlsplit

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from casefile.auth import browser, service
from casefile.auth.dependencies import LimitByClientIp
from casefile.errors import AuthError, csrf_refused
from casefile.query_parameters import open_query_string
from casefile.request_scope import RuntimeDep, SessionDep, runtime_of
from casefile.runtime import Runtime
from casefile.signin.router import finish_sign_on, forget_flow, oidc_of, start_sign_on
from casefile.users.service import NO_ADMINISTRATOR, administrator_exists
from casefile.web.security import Changer, session_cookie_headers
from casefile.web.templating import render

router = APIRouter(include_in_schema=False)

FORM_COOKIE = "casefile_signin"
MAX_EMAIL = 320
MAX_PASSWORD = 1024
SSO_CALLBACK = "/app/sign-in/sso/callback"


def sso_name(runtime: Runtime) -> str | None:
    """The provider's name on the sign-in button, when single sign-on is configured."""
    if runtime.oidc is None:
        return None
    return runtime.settings.oidc_provider_name or urlsplit(runtime.oidc.issuer).hostname or "single sign-on"


def _sso_redirect_uri(request: Request, runtime: Runtime) -> str:
    """The web app's callback, at the provider beside the API's: on the configured callback's
    site (`CASEFILE_OIDC_REDIRECT_URI`), else this server's own."""
    registered = oidc_of(runtime).redirect_uri
    return urljoin(registered or str(request.base_url), SSO_CALLBACK)


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
    context = {
        "nonce": nonce,
        "next_page": next_page,
        "email": email,
        "error": error,
        "setup": setup,
        "sso_name": sso_name(runtime_of(request)),
    }
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


@router.get("/app/sign-in/sso", dependencies=[LimitByClientIp])
async def sign_on(request: Request, runtime: RuntimeDep) -> Response:
    """ "Sign in with <provider>": the API's single sign-on flow (`GET /auth/oauth/authorize`),
    coming back to the web app's callback."""
    return await start_sign_on(runtime, oidc_of(runtime), _sso_redirect_uri(request, runtime))


@router.get(SSO_CALLBACK, dependencies=[LimitByClientIp])
@open_query_string  # providers add parameters of their own
async def sign_on_callback(
    request: Request,
    session: SessionDep,
    runtime: RuntimeDep,
    *,
    code: Annotated[str | None, Query(max_length=2048)] = None,
    state: Annotated[str | None, Query(max_length=512)] = None,
    error: Annotated[str | None, Query(max_length=200)] = None,
    iss: Annotated[str | None, Query(max_length=2048)] = None,
) -> Response:
    """The provider's answer checked exactly as `GET /auth/oauth/callback` checks it; the user it
    names gets a browser session (the cookie) instead of tokens."""
    try:
        identity, flow = await finish_sign_on(request, runtime, code=code, state=state, error=error, iss=iss)
        # A GET has no write transaction: a short one, opened once the provider has answered.
        async with runtime.db.transaction(write=True) as writer:
            ticket = await browser.sso_sign_in(writer, identity)
    except AuthError as exc:
        return await _form(request, session, next_page="/app", error=exc.description, status=exc.status_code)
    response = RedirectResponse("/app", status_code=303)
    forget_flow(response, flow)
    secure = request.url.scheme == "https"
    response.raw_headers.extend(session_cookie_headers(ticket.seal(runtime), secure=secure))
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
