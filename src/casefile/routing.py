"""What a request that no route takes is told: 404 if no route has its path, else 405 with an
`Allow` header naming every method the path has (docs/api-conventions.md#errors).

One rule for every path. Starlette's own 405 names only the first route whose path matched,
although one path is often served by several routes (`GET`, `PATCH` and `DELETE` of a case);
and the `/admin` area answers wrong methods from its catch-all route, after the administrator
check, so that only administrators learn which admin paths exist. Both ask `unrouted_error`.
`OPTIONS` is not served by any route, so it is answered like any other missing method.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from fastapi import Request
from fastapi.routing import APIRoute, iter_route_contexts
from starlette.routing import compile_path, get_name
from starlette.types import ASGIApp, Receive, Scope, Send

from casefile.errors import AppError, MethodNotAllowed, NotFound

F = TypeVar("F", bound=Callable[..., Any])
_STREAMING_ENDPOINTS: set[Callable[..., Any]] = set()


def streams_its_body(endpoint: F) -> F:
    """Mark an endpoint that reads its request body itself, as a stream (uploads): it authenticates
    on a read transaction and writes in a transaction of its own once the body is in, so a slow
    upload holds neither SQLite's write lock nor a PostgreSQL connection while its bytes trickle in.
    Decided by the route, never by the request's `Content-Type`, which the caller chooses."""
    _STREAMING_ENDPOINTS.add(endpoint)
    return endpoint


def route_streams_its_body(request: Request) -> bool:
    route = request.scope.get("route")
    return isinstance(route, APIRoute) and route.endpoint in _STREAMING_ENDPOINTS


class AnyMethodRoute(APIRoute):
    """A catch-all route that takes its path with every method: it is declared with no methods,
    which FastAPI (like Starlette) takes as "any", so a wrong method reaches this route and its
    dependencies instead of Starlette's 405. It is left out when the methods of a path are
    collected."""

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        kwargs["methods"] = set()
        # FastAPI names an operation after its methods unless it has an explicit id.
        kwargs["operation_id"] = kwargs.get("operation_id") or f"any_method_{get_name(endpoint)}"
        super().__init__(path, endpoint, **kwargs)


@functools.lru_cache(maxsize=1024)
def _path_regex(path: str) -> re.Pattern[str]:
    return compile_path(path)[0]


def allowed_methods(request: Request) -> set[str]:
    """Every method of every route of the application whose path matches the request's."""
    path = request.scope["path"]
    root_path = request.scope.get("root_path", "")
    if root_path and path.startswith(root_path):
        path = path[len(root_path) :]
    allowed: set[str] = set()
    for route in iter_route_contexts(request.app.router.routes):
        if isinstance(route.original_route, AnyMethodRoute) or not route.path or not route.methods:
            continue
        if _path_regex(route.path).match(path):
            allowed |= route.methods
    return allowed


def unrouted_error(request: Request) -> AppError:
    """The refusal for a request whose path and method no route takes together."""
    allowed = allowed_methods(request)
    if not allowed:
        return NotFound("No such endpoint")
    return MethodNotAllowed(headers={"Allow": ", ".join(sorted(allowed))})


CURRENT_PREFIX = "/api/v1"
ALIAS_PREFIX = "/api"


class ApiAliasMiddleware:
    """The unversioned `/api/...` is an alias of the current version (docs/api-conventions.md#
    versioning): its path is rewritten to `/api/v1/...` before routing. One route table instead
    of two, so a request is matched against half the routes."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        # A plain function returning the next layer's coroutine: no frame of its own to pass
        # through each time the request resumes (see middleware.HttpMiddleware).
        path: str = scope.get("path", "")
        if path.startswith(ALIAS_PREFIX + "/") and not (
            path.startswith(CURRENT_PREFIX + "/") or path == CURRENT_PREFIX
        ):
            scope = dict(scope)
            scope["path"] = CURRENT_PREFIX + path[len(ALIAS_PREFIX) :]
            raw_path: bytes | None = scope.get("raw_path")
            if raw_path is not None:
                scope["raw_path"] = CURRENT_PREFIX.encode() + raw_path[len(ALIAS_PREFIX) :]
        return self.app(scope, receive, send)
