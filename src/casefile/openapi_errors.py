"""The errors and security schemes the OpenAPI document describes (`casefile.openapi` puts them on
each operation): the two error bodies, an example of each error of `casefile.errors`, and the
response of each status an operation can give."""

from __future__ import annotations

from typing import Any

from casefile.errors import ErrorCode

BEARER = "bearerAuth"
API_KEY = "apiKeyAuth"


def _optional_header(name: str, description: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """A request header an operation takes and never requires."""
    schema = schema or {"type": "string"}
    return {"name": name, "in": "header", "required": False, "description": description, "schema": schema}


# Every authenticated POST takes one (docs/api-conventions.md#idempotency).
IDEMPOTENCY_PARAMETER = _optional_header(
    "Idempotency-Key",
    "Makes a retry safe: the first answer is kept 24 h for you and a retry with the same "
    "key and body gets it again, with `Idempotent-Replayed: true`. The key with another body is 422; a "
    "retry while the first request still runs is 409.",
    {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[\\x20-\\x7e]+$"},
)
# Conditional requests (casefile.conditional, docs/api-conventions.md#etags).
ETAG_HEADER: dict[str, Any] = {
    "description": "The resource's version: a strong hash of `data`, changed by every write",
    "schema": {"type": "string"},
}
IF_NONE_MATCH_PARAMETER = _optional_header(
    "If-None-Match", "ETags the caller holds: when one is current, the answer is 304 with no body."
)
IF_MATCH_PARAMETER = _optional_header(
    "If-Match",
    "The ETag the change was based on (or `*`): when it is no longer current, nothing "
    "is changed and the answer is 412 `PRECONDITION_FAILED` with the current `ETag`.",
)
NOT_MODIFIED: dict[str, Any] = {
    "description": "Not modified: `If-None-Match` names the current ETag",
    "headers": {"ETag": ETAG_HEADER},
}

REF = "#/components/schemas/"
_META_EXAMPLE = {"request_id": "req_01JD6ZQ4S7X9V2K8M3N5P0R1T4", "timestamp": "2026-11-22T09:03:00.123Z"}

SECURITY_SCHEMES: dict[str, Any] = {
    BEARER: {
        "type": "http",
        "scheme": "bearer",
        "bearerFormat": "JWT (an access token), or an API key `cf_…`",
        "description": "An access token from `POST /auth/login` (or the single sign-on provider's), "
        "or an API key (`Authorization: Bearer cf_…`, the same as `X-API-Key`).",
    },
    API_KEY: {
        "type": "apiKey",
        "in": "header",
        "name": "X-API-Key",
        "description": "An API key from `POST /admin/api-keys`; it acts with exactly its permissions.",
    },
}

ERROR_SCHEMAS: dict[str, Any] = {
    "AuthError": {
        "title": "AuthError",
        "description": "The authentication error body of every 401 and 403.",
        "type": "object",
        "required": ["error", "error_description", "error_code", "timestamp", "request_id"],
        "properties": {
            "error": {"type": "string", "enum": ["unauthorized", "forbidden"]},
            "error_description": {"type": "string"},
            "error_code": {"type": "string", "pattern": "^AUTH_[0-9]{3}$"},
            "timestamp": {"type": "string", "format": "date-time"},
            "request_id": {"type": "string"},
        },
        "additionalProperties": False,
    },
    "ErrorDetail": {
        "title": "ErrorDetail",
        "type": "object",
        "required": ["field", "message"],
        "properties": {
            "field": {
                "type": "string",
                "description": "Dotted path of the field, e.g. `retry_policy.max_attempts`",
            },
            "message": {"type": "string"},
        },
    },
    "ApiError": {
        "title": "ApiError",
        "description": "The API error envelope of every error other than 401 and 403.",
        "type": "object",
        "required": ["success", "error", "meta"],
        "properties": {
            "success": {"type": "boolean", "enum": [False]},
            "error": {
                "type": "object",
                "required": ["code", "message"],
                "properties": {
                    "code": {
                        "type": "string",
                        "enum": sorted({*(code.name for code in ErrorCode), "LEGAL_HOLD", "NOT_READY"}),
                    },
                    "message": {"type": "string"},
                    "details": {"type": "array", "items": {"$ref": REF + "ErrorDetail"}},
                },
            },
            "meta": {
                "type": "object",
                "required": ["request_id", "timestamp"],
                "properties": {
                    "request_id": {"type": "string"},
                    "timestamp": {"type": "string", "format": "date-time"},
                },
            },
        },
    },
}


def _auth_example(status: int, code: str, description: str) -> dict[str, Any]:
    return {
        "error": "unauthorized" if status == 401 else "forbidden",
        "error_description": description,
        "error_code": code,
        "timestamp": _META_EXAMPLE["timestamp"],
        "request_id": _META_EXAMPLE["request_id"],
    }


def _api_example(code: ErrorCode, details: list[dict[str, str]] | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code.name, "message": code.value[1]}
    if details is not None:
        error["details"] = details
    return {"success": False, "error": error, "meta": _META_EXAMPLE}


def _response(description: str, schema: str, example: dict[str, Any], **headers: str) -> dict[str, Any]:
    response: dict[str, Any] = {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": REF + schema}, "example": example}},
    }
    if headers:
        response["headers"] = {
            name: {"description": text, "schema": {"type": "string"}} for name, text in headers.items()
        }
    return response


ERROR_RESPONSES: dict[str, dict[str, Any]] = {
    # Answered by the HTTP server (uvicorn) before the application sees the request, so in plain
    # text: a request line or headers it cannot read, such as a URL over its limit (about 64 KiB).
    "400": {
        "description": "The request could not be read as HTTP (a malformed request line or headers, or "
        "a URL over the server's limit of about 64 KiB); answered by the HTTP server in plain text",
        "content": {
            "text/plain": {"schema": {"type": "string"}, "example": "Invalid HTTP request received."}
        },
    },
    "401": _response(
        "Not authenticated: no credentials (AUTH_002), a bad or expired token (AUTH_001), key (AUTH_003) "
        "or refresh token (AUTH_005), wrong password (AUTH_004), disabled user (AUTH_006)",
        "AuthError",
        _auth_example(401, "AUTH_002", "Authentication is required"),
        **{"WWW-Authenticate": "`Bearer`"},
    ),
    "403": _response(
        "Authenticated but not allowed: a permission is missing or an API key was used (AUTH_010), an "
        "administrator's token is needed (AUTH_011), or plain HTTP where HTTPS is required (AUTH_020)",
        "AuthError",
        _auth_example(403, "AUTH_010", "This request needs the permission read:cases"),
    ),
    "404": _response(
        "No such resource, or one the caller may not see",
        "ApiError",
        _api_example(ErrorCode.NOT_FOUND),
    ),
    "409": _response(
        "Conflicts with the resource's state (CONFLICT, INVALID_STATUS_TRANSITION, LEGAL_HOLD)",
        "ApiError",
        _api_example(ErrorCode.INVALID_STATUS_TRANSITION),
    ),
    "413": _response(
        "The body is over the limit (1 MiB for JSON, the upload limit for documents)",
        "ApiError",
        _api_example(ErrorCode.PAYLOAD_TOO_LARGE),
    ),
    "415": _response(
        "The body's content type is not accepted", "ApiError", _api_example(ErrorCode.UNSUPPORTED_MEDIA_TYPE)
    ),
    "422": _response(
        "The body, query string or path is invalid: one detail per failing field",
        "ApiError",
        _api_example(ErrorCode.VALIDATION_ERROR, [{"field": "title", "message": "Title is required"}]),
    ),
    "429": _response(
        "A rate limit is exceeded",
        "ApiError",
        _api_example(ErrorCode.RATE_LIMITED),
        **{"Retry-After": "Seconds until the request may be repeated"},
    ),
    "412": _response(
        "`If-Match` names none of the resource's current ETag (PRECONDITION_FAILED): someone changed "
        "it since it was read; nothing was changed. `ETag` names the current version",
        "ApiError",
        _api_example(ErrorCode.PRECONDITION_FAILED),
        ETag="The resource's current version",
    ),
    "500": _response(
        "An unexpected error; its request id is in the log",
        "ApiError",
        _api_example(ErrorCode.INTERNAL_ERROR),
    ),
    "503": _response(
        "The server is overloaded (`OVERLOADED`, load shedding): the request waited too long for its "
        "turn or found the queue full; nothing was done. Send it again after `Retry-After`",
        "ApiError",
        _api_example(ErrorCode.OVERLOADED),
        **{"Retry-After": "Seconds until the request may be repeated"},
    ),
}

METHOD_NOT_ALLOWED = _response(
    "The path exists but does not take this method; `Allow` names those it takes",
    "ApiError",
    _api_example(ErrorCode.METHOD_NOT_ALLOWED),
    Allow="The methods the path takes",
)
