"""Every error class of the service. The API's errors know their status and code, and
`error_handlers.py` turns them into bodies: authentication and permission failures (401/403,
`AuthError`) use the authentication error body; everything else (`AppError`) uses the API
error envelope (docs/api-conventions.md#errors). Last, the one error of the webhook receivers' helper.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, unique
from functools import partial
from typing import Any


@dataclass(frozen=True)
class ErrorDetail:
    field: str
    message: str


@unique  # two codes with the same status and message would silently be one
class ErrorCode(Enum):
    """The codes of the API error envelope (docs/api-conventions.md#errors): the status each answers with, and
    the message used when the raiser gives none."""

    INTERNAL_ERROR = 500, "An unexpected error occurred"
    VALIDATION_ERROR = 422, "The request is not valid"
    NOT_FOUND = 404, "The resource does not exist"
    CONFLICT = 409, "The request conflicts with the resource's current state"
    PRECONDITION_FAILED = 412, "The resource has changed since the version named in If-Match"
    INVALID_STATUS_TRANSITION = 409, "This status change is not allowed"
    LEGAL_HOLD = 409, "The case is under a legal hold"
    PAYLOAD_TOO_LARGE = 413, "The request body is too large"
    UNSUPPORTED_MEDIA_TYPE = 415, "The content type is not supported"
    RANGE_NOT_SATISFIABLE = 416, "The requested range is outside the document"
    METHOD_NOT_ALLOWED = 405, "The method is not allowed on this resource"
    RATE_LIMITED = 429, "Too many requests"
    SSO_PROVIDER_UNAVAILABLE = 503, "The single sign-on provider cannot be reached; try again later"
    NOT_READY = 503, "The service is not ready"
    AI_UNAVAILABLE = 503, "This server was installed without local AI models"
    OVERLOADED = 503, "The server is busy; try again after the time in Retry-After"


class AppError(Exception):
    """An error answered with the API error envelope. A subclass names its code in its bases:
    `class NotFound(AppError, code=ErrorCode.NOT_FOUND)`."""

    status_code, message = ErrorCode.INTERNAL_ERROR.value
    code = ErrorCode.INTERNAL_ERROR.name

    def __init_subclass__(cls, *, code: ErrorCode | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if code is not None:
            cls.status_code, cls.message = code.value
            cls.code = code.name

    def __init__(
        self,
        message: str | None = None,
        *,
        details: list[ErrorDetail] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        if message:
            self.message = message
        self.details = details
        self.headers = headers or {}
        super().__init__(self.message)


class ValidationFailed(AppError, code=ErrorCode.VALIDATION_ERROR):
    @classmethod
    def on(cls, field: str, message: str) -> ValidationFailed:
        return cls(details=[ErrorDetail(field, message)])


class NotFound(AppError, code=ErrorCode.NOT_FOUND):
    @classmethod
    def referenced(cls, details: list[ErrorDetail]) -> NotFound:
        """A body names, by its id or key, something that does not exist (or that the caller may
        not see): 404 with one detail naming each such field, as a path that names nothing is 404
        (docs/api-conventions.md#references)."""
        message = details[0].message if len(details) == 1 else "Some of what the request names does not exist"
        return cls(message, details=details)


class Conflict(AppError, code=ErrorCode.CONFLICT): ...


class PreconditionFailed(AppError, code=ErrorCode.PRECONDITION_FAILED):
    """`If-Match` names none of the resource's current ETag (docs/api-conventions.md#etags); the
    answer's `ETag` is the current one."""


class InvalidStatusTransition(AppError, code=ErrorCode.INVALID_STATUS_TRANSITION): ...


class LegalHoldActive(AppError, code=ErrorCode.LEGAL_HOLD):
    """Deleting, purging or replacing the content of a held case or its documents
    (docs/api-conventions.md#legal-holds)."""


class PayloadTooLarge(AppError, code=ErrorCode.PAYLOAD_TOO_LARGE): ...


class UnsupportedMediaType(AppError, code=ErrorCode.UNSUPPORTED_MEDIA_TYPE): ...


class RangeNotSatisfiable(AppError, code=ErrorCode.RANGE_NOT_SATISFIABLE): ...


class MethodNotAllowed(AppError, code=ErrorCode.METHOD_NOT_ALLOWED): ...


class RateLimited(AppError, code=ErrorCode.RATE_LIMITED): ...


class SsoNotConfigured(NotFound):
    message = "Single sign-on is not configured on this server"


class NotReady(AppError, code=ErrorCode.NOT_READY):
    """`/readyz`: a dependency the service needs (the database) does not answer."""


class Overloaded(AppError, code=ErrorCode.OVERLOADED):
    """Load shedding (`casefile.shedding`): the request waited too long for its turn, or found the
    queue full. Answered at once, with `Retry-After`."""


class AiUnavailable(AppError, code=ErrorCode.AI_UNAVAILABLE):
    """A request that runs a local model (asking a case) on a server installed without the
    `casefile[ai]` extra (docs/decisions/0021-operating-and-upgrading.md)."""


class ProviderUnavailable(AppError, code=ErrorCode.SSO_PROVIDER_UNAVAILABLE):
    """The provider did not answer, or answered with something unusable: nothing the caller did
    wrong, so not a 401; try again later."""


def provider_answered(what: str, status: int) -> ProviderUnavailable:
    return ProviderUnavailable(f"The single sign-on provider's {what} answered HTTP {status}")


class AuthError(Exception):
    """401/403 with the authentication error body: `{error, error_description, error_code, ...}`."""

    status_code = 401
    error = "unauthorized"

    def __init__(self, error_code: str, description: str) -> None:
        self.error_code = error_code
        self.description = description
        super().__init__(description)


class Unauthorized(AuthError):
    status_code, error = 401, "unauthorized"


class Forbidden(AuthError):
    status_code, error = 403, "forbidden"
    # The case the refusal concerns, when there is one (its `denied` audit entry names it).
    case_id: str | None = None


# The catalogue of authentication errors (docs/api-conventions.md#errors), so the codes live in one place.
# Each is called to make a fresh exception: `raise invalid_token()`.
invalid_token = partial(Unauthorized, "AUTH_001", "The access token is invalid, expired or revoked")
no_credentials = partial(Unauthorized, "AUTH_002", "Authentication is required")
invalid_api_key = partial(Unauthorized, "AUTH_003", "The API key is unknown, revoked or expired")
bad_login = partial(Unauthorized, "AUTH_004", "Wrong email or password")
invalid_refresh_token = partial(
    Unauthorized, "AUTH_005", "The refresh token is invalid, expired, reused or revoked"
)
user_disabled = partial(Unauthorized, "AUTH_006", "The user is disabled")
user_token_required = partial(
    Forbidden, "AUTH_010", "This endpoint needs a user's access token, not an API key"
)
admin_required = partial(Forbidden, "AUTH_011", "This endpoint needs an administrator's access token")


def admin_token_needed_for(action: str) -> Forbidden:
    """AUTH_011 for one action on an endpoint that others may otherwise use (e.g. an API key with
    `write:users` promoting someone)."""
    return Forbidden("AUTH_011", f"{action} needs an administrator's access token")


https_required = partial(Forbidden, "AUTH_020", "This server accepts HTTPS only; use https://")
# The web app (docs/web-app.md#sessions): a state-changing request without its session's CSRF token.
csrf_refused = partial(
    Forbidden, "AUTH_021", "The form is out of date or did not come from this site; reload the page"
)


def case_access_missing(level: str, case_id: str | None = None) -> Forbidden:
    """The caller may see the case but not do this to it (docs/api-conventions.md#matter-access)."""
    error = Forbidden("AUTH_012", f"This request needs {level} access to the case")
    error.case_id = case_id
    return error


def permission_missing(permission: str) -> Forbidden:
    return Forbidden("AUTH_010", f"This request needs the permission {permission}")


def sso_failed(reason: str) -> Unauthorized:
    """The sign-in through the provider failed (state, provider error, code exchange, ID token)."""
    return Unauthorized("AUTH_007", f"Single sign-on failed: {reason}")


class SignatureError(ValueError):
    """For webhook receivers (`casefile.webhooks.verify_signature`): the delivery is not authentic
    (or too old): answer it with 400 and do not act on it."""
