"""Request-scoped dependencies: the session (one transaction per request) and the caller.

Each router names what its endpoints need with `Require("<action>:<resource>")`, e.g.
`CasesRead = Annotated[Principal, Depends(Require("read:cases"))]`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.auth.permissions import Principal
from casefile.auth.service import authenticate_api_key, authenticate_bearer
from casefile.db import finish
from casefile.errors import Forbidden, admin_required, invalid_token, no_credentials, permission_missing
from casefile.ratelimit import Bucket, enforce, is_admin_path
from casefile.runtime import Runtime

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def get_runtime(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]


async def get_session(request: Request, runtime: RuntimeDep) -> AsyncIterator[AsyncSession]:
    """The request's one transaction: committed when the handler returns, rolled back if it raises."""
    write = request.method not in SAFE_METHODS and not _streams_its_body(request)
    async with runtime.db.session(write=write) as session:
        session.info["write"] = write
        try:
            yield session
        except BaseException:
            await finish(session, commit=False)
            raise
        await finish(session, commit=True)


def _streams_its_body(request: Request) -> bool:
    """Uploads authenticate on a read transaction, stream the body with no transaction open, and
    then write in a transaction of their own: a slow upload must not hold SQLite's write lock
    (or a PostgreSQL connection) while its bytes trickle in."""
    return request.headers.get("content-type", "").lower().startswith("multipart/form-data")


# scope="function": the commit happens when the handler returns, before the response is sent, so
# a client that reads right after a write always sees it (and a failed commit is an error response).
SessionDep = Annotated[AsyncSession, Depends(get_session, scope="function")]


async def get_principal(request: Request, session: SessionDep, runtime: RuntimeDep) -> Principal:
    """The caller, counted in its rate-limit bucket before any permission is checked."""
    principal = await _authenticate(request, session, runtime)
    if is_admin_path(request.url.path):
        bucket = Bucket.ADMIN
    else:
        bucket = Bucket.USER if principal.kind == "user" else Bucket.API_KEY
    await enforce(runtime.limiter, request.scope, bucket, principal.id)
    return principal


async def _authenticate(request: Request, session: AsyncSession, runtime: Runtime) -> Principal:
    """Bearer token first (contract §4: when both are sent, the bearer token is used), then API key."""
    authorization = request.headers.get("authorization")
    if authorization:
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise invalid_token()
        return await authenticate_bearer(session, runtime, token.strip())
    api_key = request.headers.get("x-api-key")
    if api_key:
        return await authenticate_api_key(runtime, session, api_key.strip())
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

    def __init__(self, permission: str) -> None:
        self.permission = permission

    async def __call__(self, principal: CurrentPrincipal) -> Principal:
        if not principal.can(self.permission):
            raise permission_missing(self.permission)
        return principal


async def require_user(principal: CurrentPrincipal) -> Principal:
    if principal.kind != "user":
        raise Forbidden("AUTH_010", "This endpoint needs a user's access token, not an API key")
    return principal


async def require_admin(principal: CurrentPrincipal) -> Principal:
    if not principal.is_admin_user:
        raise admin_required()
    return principal


CurrentUser = Annotated[Principal, Depends(require_user)]
AdminUser = Annotated[Principal, Depends(require_admin)]
