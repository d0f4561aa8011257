from __future__ import annotations

import secrets
from typing import Annotated, Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response

from casefile import envelope
from casefile.auth import service
from casefile.auth.dependencies import LimitByClientIp, UserPrincipal
from casefile.auth.oidc import FLOW_COOKIE, FLOW_SECONDS, Flow, Identity, OidcClient, provider_error
from casefile.envelope import Envelope
from casefile.errors import SsoNotConfigured, sso_failed
from casefile.query_parameters import open_query_string
from casefile.request_scope import RuntimeDep, SessionDep
from casefile.runtime import Runtime
from casefile.signin.schemas import LoginRequest, LogoutOut, RefreshRequest, SetupOut, TokenOut
from casefile.users.schemas import UserOut
from casefile.users.service import NO_ADMINISTRATOR, administrator_exists

router = APIRouter(prefix="/auth", tags=["auth"])


def _tokens(issued: service.IssuedTokens) -> JSONResponse:
    return envelope.ok(
        TokenOut(
            token=issued.access_token,
            expires_in=issued.expires_in,
            expires_at=issued.expires_at_epoch,
            refresh_token=issued.refresh_token,
            user=UserOut.model_validate(issued.user),
        ).model_dump(mode="json")
    )


@router.post("/login", response_model=Envelope[TokenOut], dependencies=[LimitByClientIp])
async def login(body: LoginRequest, session: SessionDep, runtime: RuntimeDep) -> JSONResponse:
    """Exchange email and password for an access token (JWT) and a refresh token."""
    return _tokens(await service.login(session, runtime, email=body.email, password=body.password))


@router.post("/refresh", response_model=Envelope[TokenOut], dependencies=[LimitByClientIp])
async def refresh(
    request: Request, body: RefreshRequest, session: SessionDep, runtime: RuntimeDep
) -> JSONResponse:
    """Exchange a refresh token (single use) for a new access token and a new refresh token. The
    same token again within 10 seconds from the same client (address and user agent), before the
    new one is used, is a retry and gets the same pair; any other reuse revokes the session."""
    address = request.client.host if request.client else ""
    client = service.client_fingerprint(address, request.headers.get("user-agent", ""))
    return _tokens(await service.refresh(session, runtime, refresh_token=body.refresh_token, client=client))


@router.post("/logout", response_model=Envelope[LogoutOut])
async def logout(principal: UserPrincipal, session: SessionDep, runtime: RuntimeDep) -> JSONResponse:
    """End the session: its access tokens and refresh tokens stop working at once."""
    await service.logout(session, runtime, principal)
    return envelope.ok({"logged_out": True})


@router.get("/setup", response_model=Envelope[SetupOut], dependencies=[LimitByClientIp])
async def setup(session: SessionDep) -> JSONResponse:
    """For a sign-in page, before anyone signs in: whether an administrator exists, and if not, how
    the operator creates one (no one can sign in until then)."""
    exists = await administrator_exists(session)
    return envelope.ok(
        SetupOut(administrator_exists=exists, message=None if exists else NO_ADMINISTRATOR).model_dump()
    )


# --- Single sign-on (OpenID Connect, authorization-code flow with PKCE) ------------------------


def oidc_of(runtime: Runtime) -> OidcClient:
    if runtime.oidc is None:
        raise SsoNotConfigured()
    return runtime.oidc


# Documented errors of the single sign-on endpoints, beyond those every endpoint has (casefile.openapi).
SSO_ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"description": "Single sign-on is not configured (`CASEFILE_OIDC_ISSUER` is unset)"},
    503: {"description": "The OpenID provider cannot be reached"},
}


def _redirect_uri(request: Request, oidc: OidcClient) -> str:
    """The callback URL registered at the provider: configured, or this server's own."""
    return oidc.redirect_uri or str(request.base_url).rstrip("/") + "/api/v1/auth/oauth/callback"


@router.get(
    "/oauth/authorize",
    dependencies=[LimitByClientIp],
    response_class=RedirectResponse,
    status_code=302,
    responses={302: {"description": "To the provider's authorization endpoint"}, **SSO_ERRORS},
)
async def oauth_authorize(request: Request, runtime: RuntimeDep) -> RedirectResponse:
    """Start a single sign-on: redirect the browser to the OpenID provider. The provider sends it
    back to `/auth/oauth/callback`, which answers like `POST /auth/login`."""
    oidc = oidc_of(runtime)
    return await start_sign_on(runtime, oidc, _redirect_uri(request, oidc))


async def start_sign_on(runtime: Runtime, oidc: OidcClient, redirect_uri: str) -> RedirectResponse:
    """To the provider, with the flow in its cookie for `redirect_uri`'s path (the API's callback,
    or the web app's: docs/web-app.md#single-sign-on)."""
    url, flow = await oidc.begin(redirect_uri)
    response = RedirectResponse(url, status_code=302, headers={"Cache-Control": "no-store"})
    # The flow rides in an encrypted cookie that only the callback's path receives: any API
    # process can finish the sign-in, and only in the browser that started it.
    response.set_cookie(
        FLOW_COOKIE,
        flow.seal(runtime.secret_box.seal),
        max_age=FLOW_SECONDS,
        path=urlsplit(redirect_uri).path or "/",
        secure=redirect_uri.startswith("https://"),
        httponly=True,
        samesite="lax",
    )
    return response


@router.get(
    "/oauth/callback", response_model=Envelope[TokenOut], dependencies=[LimitByClientIp], responses=SSO_ERRORS
)
@open_query_string  # providers add parameters of their own (session_state, error_description, …)
async def oauth_callback(
    request: Request,
    runtime: RuntimeDep,
    *,
    code: Annotated[str | None, Query(max_length=2048)] = None,
    state: Annotated[str | None, Query(max_length=512)] = None,
    error: Annotated[str | None, Query(max_length=200)] = None,
    iss: Annotated[str | None, Query(max_length=2048)] = None,
) -> JSONResponse:
    """Finish a single sign-on: check the state, exchange the code at the provider, check its ID
    token, and answer like `POST /auth/login` (the user is matched by email, or created as a
    viewer on the first sign-in)."""
    identity, flow = await finish_sign_on(request, runtime, code=code, state=state, error=error, iss=iss)
    # A GET, so the request has no write transaction: this one is short and opened only now,
    # after the provider has answered.
    async with runtime.db.transaction(write=True) as session:
        issued = await service.sso_login(session, runtime, identity)
    response = _tokens(issued)
    forget_flow(response, flow)
    return response


async def finish_sign_on(
    request: Request,
    runtime: Runtime,
    *,
    code: str | None,
    state: str | None,
    error: str | None,
    iss: str | None,
) -> tuple[Identity, Flow]:
    """The provider's answer checked (the flow cookie's state, the issuer, its error) and its code
    exchanged: who signed in. For the API's callback and the web app's alike."""
    oidc = oidc_of(runtime)
    flow = Flow.open(request.cookies.get(FLOW_COOKIE), runtime.secret_box.open)
    if flow is None or state is None or not secrets.compare_digest(state.encode(), flow.state.encode()):
        raise sso_failed("the sign-in state is missing, expired or does not match; start again")
    # RFC 9207: a provider that names itself in the answer must be ours (mix-up defence).
    if iss is not None and iss.rstrip("/") != oidc.issuer.rstrip("/"):
        raise sso_failed("the answer comes from another issuer")
    if error is not None:
        raise sso_failed(f"the provider refused the sign-in ({provider_error(error) or 'unknown error'})")
    if not code:
        raise sso_failed("the provider sent no authorization code")
    return await oidc.finish(flow, code), flow


def forget_flow(response: Response, flow: Flow) -> None:
    response.delete_cookie(FLOW_COOKIE, path=urlsplit(flow.redirect_uri).path or "/", httponly=True)
    response.headers["Cache-Control"] = "no-store"
