"""What every answer under `/app` carries: a Content-Security-Policy with no inline script and
no framing, the other hardening headers, no caching of pages, and the renewed session cookie when
`auth.browser` renewed it (its idle clock). Also the CSRF check of every state-changing request."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Annotated

from fastapi import Depends, Request
from starlette.datastructures import MutableHeaders
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from casefile.auth.browser import COOKIE, RENEWED_STATE, applies_to, csrf_matches
from casefile.auth.dependencies import UserPrincipal
from casefile.auth.permissions import Principal
from casefile.errors import admin_required, csrf_refused
from casefile.middleware import HttpMiddleware
from casefile.request_scope import runtime_of

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
PAGE_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "x-csrf-token"


def session_cookie_headers(value: str | None, *, secure: bool) -> list[tuple[bytes, bytes]]:
    """Set-Cookie for the session cookie (None: delete it). A browser-session cookie (no
    Max-Age): the server enforces the idle and absolute limits itself."""
    response = Response()
    if value is None:
        response.delete_cookie(COOKIE, path="/app", secure=secure, httponly=True, samesite="lax")
    else:
        response.set_cookie(COOKIE, value, path="/app", secure=secure, httponly=True, samesite="lax")
    return [h for h in response.raw_headers if h[0] == b"set-cookie"]


class WebHeadersMiddleware(HttpMiddleware):
    def handle(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        if not applies_to(scope["path"]):
            return self.app(scope, receive, send)
        static = scope["path"].startswith("/app/static/")

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in PAGE_HEADERS.items():
                    headers.setdefault(name, value)
                if not static:
                    headers["Cache-Control"] = "no-store"
                renewed = scope.get("state", {}).get(RENEWED_STATE)
                if isinstance(renewed, str) and "set-cookie" not in headers:
                    secure = scope.get("scheme") == "https"
                    for raw_name, raw_value in session_cookie_headers(renewed, secure=secure):
                        headers.append(raw_name.decode(), raw_value.decode())
            await send(message)

        return self.app(scope, receive, send_with_headers)


async def require_csrf(request: Request, principal: UserPrincipal) -> Principal:
    """A signed-in user's state-changing request, with the token of their session: in the form
    (`csrf_token`), a header (htmx sends `X-CSRF-Token`), or the query (an upload's form, whose
    multipart body the upload streams without reading fields first)."""
    given = request.headers.get(CSRF_HEADER) or request.query_params.get(CSRF_FIELD)
    if given is None and request.headers.get("content-type", "").startswith(
        "application/x-www-form-urlencoded"
    ):
        value = (await request.form()).get(CSRF_FIELD)
        given = value if isinstance(value, str) else None
    if principal.session_id is None or not csrf_matches(runtime_of(request), principal.session_id, given):
        raise csrf_refused()
    return principal


Changer = Annotated[Principal, Depends(require_csrf)]


async def require_admin_csrf(principal: Changer) -> Principal:
    """An administrator's state-changing request with its CSRF token (the `/admin` API's rule:
    an administrator's own session, never an API key)."""
    if not principal.is_admin_user:
        raise admin_required()
    return principal


AdminChanger = Annotated[Principal, Depends(require_admin_csrf)]
