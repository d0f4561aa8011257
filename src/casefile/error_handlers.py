"""The one error path: every failure, whatever raised it, leaves as one of the two bodies."""

from __future__ import annotations

import logging
from typing import Any, TypeVar

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from casefile.clock import format_timestamp, utcnow
from casefile.envelope import current_request_id, meta
from casefile.errors import (
    AppError,
    AuthError,
    ErrorDetail,
    NotFound,
    PayloadTooLarge,
    UnsupportedMediaType,
    ValidationFailed,
)
from casefile.routing import unrouted_error

log = logging.getLogger("casefile.errors")

M = TypeVar("M", bound=BaseModel)


def app_error_response(exc: AppError, request_id: str | None = None) -> JSONResponse:
    error: dict[str, Any] = {"code": exc.code, "message": exc.message}
    if exc.details is not None:
        error["details"] = [{"field": d.field, "message": d.message} for d in exc.details]
    return JSONResponse(
        {"success": False, "error": error, "meta": meta(request_id)},
        status_code=exc.status_code,
        headers=exc.headers,
    )


def auth_error_response(exc: AuthError) -> JSONResponse:
    headers = {"WWW-Authenticate": 'Bearer realm="casefile"'} if exc.status_code == 401 else {}
    return JSONResponse(
        {
            "error": exc.error,
            "error_description": exc.description,
            "error_code": exc.error_code,
            "timestamp": format_timestamp(utcnow()),
            "request_id": current_request_id(),
        },
        status_code=exc.status_code,
        headers=headers,
    )


def _field_path(loc: tuple[Any, ...]) -> str:
    """`("body", "retry_policy", "max_attempts")` → `retry_policy.max_attempts`
    (docs/api-conventions.md#errors)."""
    parts = [str(p) for p in loc]
    if parts and parts[0] in ("body", "query", "path", "header", "cookie", "form"):
        parts = parts[1:]
    return ".".join(parts) or "body"


def validation_details(errors: Any) -> list[ErrorDetail]:
    details = []
    for error in errors:
        if error.get("type") == "json_invalid":
            details.append(ErrorDetail("body", "The body is not valid JSON"))
            continue
        field = _field_path(tuple(error.get("loc", ())))
        message = str(error.get("msg", "Invalid value"))
        if error.get("type") == "missing":
            message = f"{field.split('.')[-1].replace('_', ' ').capitalize()} is required"
        elif error.get("type") == "extra_forbidden":
            message = "Unknown field"
        details.append(ErrorDetail(field, message.removeprefix("Value error, ")))
    return details


def validated(model: type[M], values: dict[str, Any]) -> M:
    """`values` read into a request model outside a request's body (a web form, a bulk job's
    action on one matter): the same refusal as the body's, a 422 naming each field."""
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        raise ValidationFailed(details=validation_details(exc.errors())) from None


async def _on_app_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, AppError)
    return app_error_response(exc)


async def _on_auth_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, AuthError)
    return auth_error_response(exc)


async def _on_validation_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return app_error_response(ValidationFailed(details=validation_details(exc.errors())))


async def _on_http_error(request: Request, exc: Exception) -> JSONResponse:
    """Errors raised by Starlette's routing itself (unknown route, wrong method, ...)."""
    assert isinstance(exc, StarletteHTTPException)
    mapped: AppError
    if exc.status_code == 404:
        mapped = NotFound("No such endpoint" if exc.detail == "Not Found" else str(exc.detail))
    elif exc.status_code == 405:
        mapped = unrouted_error(request)  # Allow names every method of the path
    elif exc.status_code == 413:
        mapped = PayloadTooLarge()
    elif exc.status_code == 415:
        mapped = UnsupportedMediaType()
    elif exc.status_code < 500:
        # Any other client error raised by the framework: a request it could not accept.
        mapped = ValidationFailed(str(exc.detail))
        mapped.status_code = exc.status_code
    else:
        mapped = AppError()
    return app_error_response(mapped)


async def _on_unexpected(request: Request, exc: Exception) -> JSONResponse:
    # This handler runs outside the request-id middleware (Starlette's ServerErrorMiddleware is
    # outermost), so the id comes from the request's state, and the header is set here.
    request_id = request.scope.get("state", {}).get("request_id") or current_request_id()
    # The whole story goes to the log, under the request id; the caller gets only the id.
    log.error(
        "unhandled error in %s %s [request_id=%s]", request.method, request.url.path, request_id, exc_info=exc
    )
    runtime = getattr(request.app.state, "runtime", None)
    if runtime is not None:
        route = getattr(request.scope.get("route"), "path", request.url.path)
        runtime.errors.report(
            exc, method=request.method, path=request.url.path, route=route, request_id=request_id
        )
    response = app_error_response(AppError(), request_id)
    # The same id headers as every other answer (X-Request-ID, X-Client-Request-ID).
    id_headers = request.scope.get("state", {}).get("response_id_headers") or {"X-Request-ID": request_id}
    for name, value in id_headers.items():
        response.headers[name] = value
    # Starlette re-raises the error after this answer, and the server then closes the connection:
    # say so, so that a keep-alive client opens a new one instead of failing its next request.
    response.headers["Connection"] = "close"
    return response


def install(app: FastAPI) -> None:
    app.add_exception_handler(AppError, _on_app_error)
    app.add_exception_handler(AuthError, _on_auth_error)
    app.add_exception_handler(RequestValidationError, _on_validation_error)
    app.add_exception_handler(StarletteHTTPException, _on_http_error)
    app.add_exception_handler(Exception, _on_unexpected)
