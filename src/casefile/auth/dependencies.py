"""Request-scoped dependencies: the session (one transaction per request) and the caller.

The caller is a `…Principal`: `CurrentPrincipal` (anyone authenticated), `UserPrincipal` (a user's
access token, not an API key), `AdminPrincipal` (an administrator's access token). Each domain
declares, once, in its `dependencies.py`, the permissions its endpoints need (e.g. `CasesRead =
Annotated[Principal, Depends(Require(Permission.READ_CASES))]`) and the rows its paths name
(`GroupInPath = Annotated[Group, Depends(in_path(get_group, "group_id"))]`: the group of
`{group_id}`, or 404). How a row is found, and what its 404 says, is the domain's lookup
(`get_group`; a case's is `cases.access.case_for`), built on `db.get_or_404`.

FastAPI resolves dependencies in the order of the handler's parameters: a handler lists the
permission before the row in its path, so that a caller without the permission gets 401/403 and
does not learn whether the row exists. A handler that validates a body or a query string loads its
row in its body instead (`await case_for(session, principal, case_id)`): FastAPI validates those after every
dependency has run, and a bad request must stay a 422 whatever the id.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncSession

from casefile import idempotency
from casefile.auth import browser
from casefile.auth.api_key_tokens import SCHEME as API_KEY_SCHEME
from casefile.auth.permissions import Permission, Principal
from casefile.auth.service import authenticate_api_key, authenticate_bearer
from casefile.errors import (
    admin_required,
    invalid_token,
    no_credentials,
    permission_missing,
    user_token_required,
)
from casefile.ratelimit import Bucket, enforce, is_admin_path
from casefile.request_context import current_context
from casefile.request_scope import RuntimeDep, SessionDep, runtime_of
from casefile.runtime import Runtime

API_KEY_PREFIX = f"{API_KEY_SCHEME}_"


async def get_principal(request: Request, session: SessionDep) -> Principal:
    """The caller, counted in its rate-limit bucket before any permission is checked."""
    runtime = runtime_of(request)
    principal = await _authenticate(request, session, runtime)
    context = current_context()
    if context is not None:  # the audit trail's actor for the rest of the request
        context.identify(principal.kind, principal.actor_id, principal.user_id)
    request.state.principal_id = principal.id  # for the request's log line (casefile.metrics)
    if is_admin_path(request.scope["path"]):
        bucket = Bucket.ADMIN
    else:
        bucket = Bucket.USER if principal.kind == "user" else Bucket.API_KEY
    await enforce(runtime.limiter, request.scope, bucket, principal.id)
    # Keys are per caller: a keyed POST is reserved (or replayed, or refused) once it is known.
    await idempotency.reserve(request, session, principal.id)
    return principal


async def _authenticate(request: Request, session: AsyncSession, runtime: Runtime) -> Principal:
    """Bearer token first, then API key: when both are sent, the bearer token is used
    (docs/api-conventions.md#authentication). A bearer token that is an API key (`cf_…`, never
    the start of a JWT) is taken as one: clients that only know bearer tokens can use keys."""
    authorization = request.headers.get("authorization")
    if authorization:
        scheme, _, token = authorization.partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise invalid_token()
        if token.startswith(API_KEY_PREFIX):
            return await authenticate_api_key(runtime, session, token)
        return await authenticate_bearer(session, runtime, token)
    api_key = request.headers.get("x-api-key")
    if api_key:
        return await authenticate_api_key(runtime, session, api_key.strip())
    if browser.applies_to(request.scope["path"]):
        # The web app's pages: the browser session cookie, and only there (auth/browser.py).
        state: dict[str, object] = request.scope.setdefault("state", {})
        return await browser.authenticate(session, runtime, request.cookies.get(browser.COOKIE), state)
    raise no_credentials()


async def limit_by_client_ip(request: Request, runtime: RuntimeDep) -> None:
    """For the endpoints that take credentials (login, refresh, sign-on): per client IP, so that
    guessing passwords or tokens is slowed down whoever it is aimed at. Behind a proxy, the IP is
    the one `--proxy-headers` takes from `X-Forwarded-For`."""
    client_ip = request.client.host if request.client else "unknown"
    await enforce(runtime.limiter, request.scope, Bucket.LOGIN, client_ip)


LimitByClientIp = Depends(limit_by_client_ip)


CurrentPrincipal = Annotated[Principal, Depends(get_principal)]


class Require:
    """Dependency: the caller must hold `permission`."""

    def __init__(self, permission: Permission) -> None:
        self.permission = permission

    async def __call__(self, principal: CurrentPrincipal) -> Principal:
        if not principal.can(self.permission):
            raise permission_missing(self.permission)
        return principal


async def require_user(principal: CurrentPrincipal) -> Principal:
    if principal.kind != "user":
        raise user_token_required()
    return principal


async def require_admin(principal: CurrentPrincipal) -> Principal:
    if not principal.is_admin_user:
        raise admin_required()
    return principal


UserPrincipal = Annotated[Principal, Depends(require_user)]
AdminPrincipal = Annotated[Principal, Depends(require_admin)]
