"""Pure ASGI middleware: request ids, transport security and the JSON body limit, and what every
middleware of ours shares (`HttpMiddleware`, `with_headers`; the rate-limit headers use them too).

Pure ASGI (not BaseHTTPMiddleware) so that streaming bodies stay streaming and contextvars set
here reach the handlers.
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from casefile.envelope import (
    CLIENT_REQUEST_ID_HEADER,
    REQUEST_ID_HEADER,
    client_request_id,
    make_request_id,
    request_id_var,
    request_target_var,
)
from casefile.error_handlers import app_error_response, auth_error_response
from casefile.errors import AppError, PayloadTooLarge, UnsupportedMediaType, ValidationFailed, https_required
from casefile.input_rules import json_body_problems
from casefile.request_context import USER_AGENT_LIMIT, RequestContext, request_context

# Bodies of these types are streamed by their endpoints, which enforce their own limits.
STREAMED_CONTENT_TYPES = ("multipart/form-data",)
# Accepted here (within the size limit) and judged by the endpoint: JSON, and the plain form
# encoding, which upload endpoints answer with a clear "file is required".
ACCEPTED_CONTENT_TYPES = ("application/json", "application/x-www-form-urlencoded")

log = logging.getLogger("casefile.request")


class HttpMiddleware:
    """Middleware that acts on HTTP requests (`handle`); anything else (lifespan) passes through.

    `__call__` is a plain function that returns the coroutine to await, not a coroutine itself:
    every time a request resumes (after each database round trip) it passes back through every
    frame of the middleware stack, and this way each layer is one frame instead of two."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        if scope["type"] == "http":
            return self.handle(scope, receive, send)
        return self.app(scope, receive, send)

    def handle(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        """An `async def`, or (for a layer that only passes the request on) a plain function
        returning the next layer's coroutine, for the same reason as `__call__`."""
        raise NotImplementedError


def with_headers(send: Send, headers: Callable[[], Mapping[str, str]]) -> Send:
    """`send`, setting `headers()` on the response as it starts (so they are computed then)."""

    async def send_with_headers(message: Message) -> None:
        if message["type"] == "http.response.start":
            response_headers = MutableHeaders(scope=message)
            for name, value in headers().items():
                response_headers[name] = value
        await send(message)

    return send_with_headers


class RequestIdMiddleware(HttpMiddleware):
    """Give every request our own `req_…` id and put it on every response; a well-formed
    `X-Request-ID` of the caller is logged with ours and returned as `X-Client-Request-ID`."""

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        request_id = make_request_id()
        headers = Headers(scope=scope)
        client_id = client_request_id(headers.get(REQUEST_ID_HEADER))
        response_headers = {REQUEST_ID_HEADER: request_id}
        if client_id is not None:
            response_headers[CLIENT_REQUEST_ID_HEADER] = client_id
            log.info(
                "request %s %s [request_id=%s client_request_id=%s]",
                scope["method"],
                scope["path"],
                request_id,
                client_id,
            )
        state = scope.setdefault("state", {})
        state["request_id"] = request_id
        # The 500 answer is made outside this middleware (casefile.error_handlers): it reads both here.
        state["response_id_headers"] = response_headers
        if client_id is not None:
            state["client_request_id"] = client_id
        # Who and where, for the audit trail; the caller's authentication adds the actor.
        client = scope.get("client")
        user_agent = headers.get("user-agent")
        context = RequestContext(
            request_id=request_id,
            ip=client[0] if client else None,
            user_agent=user_agent[:USER_AGENT_LIMIT] if user_agent else None,
        )
        token = request_id_var.set(request_id)
        target = request_target_var.set(
            (scope.get("root_path", "") + scope["path"], scope.get("query_string", b"").decode("latin-1"))
        )
        try:
            with request_context(context):
                await self.app(scope, receive, with_headers(send, lambda: response_headers))
        finally:
            request_target_var.reset(target)
            request_id_var.reset(token)


class AnsweredErrorsMiddleware(HttpMiddleware):
    """Outside Starlette's ServerErrorMiddleware: an unhandled error was answered (500) and logged
    with its request id by `error_handlers`, and is then re-raised; here it ends, so that the
    server does not log the same traceback a second time. An error before any answer goes on."""

    @classmethod
    def wrap(cls, app: Any) -> None:
        """Make this the outermost layer of `app` (FastAPI builds its stack on the first request)."""
        build = app.build_middleware_stack
        app.build_middleware_stack = lambda: cls(build())

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        answered = False

        async def watch(message: Message) -> None:
            nonlocal answered
            if message["type"] == "http.response.start":
                answered = True
            await send(message)

        try:
            await self.app(scope, receive, watch)
        except Exception:
            if not answered:
                raise


class BodyLimitMiddleware(HttpMiddleware):
    """Refuse JSON bodies over the limit (413), bodies of a type no endpoint takes (415), and JSON
    bodies no endpoint can take (422: `casefile.input_rules.json_body_problems`).

    The body is read here, up to the limit, and replayed to the application, so an oversized or
    endless body is cut off after `max_bytes` whether or not it declared a Content-Length.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        super().__init__(app)
        self.max_bytes = max_bytes

    def handle(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        if scope["method"] in ("GET", "HEAD", "OPTIONS", "DELETE"):
            return self.app(scope, receive, send)
        return self._check_body(scope, receive, send)

    async def _check_body(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope=scope)
        content_type = headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type.startswith(STREAMED_CONTENT_TYPES):
            await self.app(scope, receive, send)
            return
        declared = headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > self.max_bytes:
            await app_error_response(self._too_large())(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await app_error_response(self._too_large())(scope, receive, send)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        if body and content_type not in ACCEPTED_CONTENT_TYPES and not _is_json(content_type):
            refused = UnsupportedMediaType("Send the request body as application/json")
            await app_error_response(refused)(scope, receive, send)
            return
        problems = json_body_problems(body) if body and _is_json(content_type) else []
        if problems:
            await app_error_response(ValidationFailed(details=problems))(scope, receive, send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    def _too_large(self) -> AppError:
        return PayloadTooLarge(f"JSON request bodies are limited to {self.max_bytes} bytes")


def _is_json(content_type: str) -> bool:
    return content_type == "application/json" or content_type.endswith("+json")


HSTS_VALUE = "max-age=31536000; includeSubDomains"


class TransportSecurityMiddleware(HttpMiddleware):
    """HTTPS rules (docs/api-conventions.md#https): answers given over HTTPS carry HSTS; with `require_https`,
    plain-HTTP requests are refused with AUTH_020 before any body is read, except from loopback
    (health checks, a local proxy) and for `/healthz`.

    The scheme and client address are the connection's, or a trusted proxy's `X-Forwarded-*` when
    the server runs with `--proxy-headers` (uvicorn rewrites the scope before this runs).
    """

    def __init__(self, app: ASGIApp, require_https: bool) -> None:
        super().__init__(app)
        self.require_https = require_https

    def handle(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        if scope.get("scheme") == "https":
            return self.app(
                scope, receive, with_headers(send, lambda: {"Strict-Transport-Security": HSTS_VALUE})
            )
        if self.require_https and scope["path"] != "/healthz" and not _from_loopback(scope):
            return auth_error_response(https_required())(scope, receive, send)
        return self.app(scope, receive, send)


def _from_loopback(scope: Scope) -> bool:
    client = scope.get("client")
    if not client:  # a Unix socket: the caller is on this machine
        return True
    try:
        address = ipaddress.ip_address(client[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback
