"""One exception hierarchy. Each class knows its status and code; `app.py` turns them into bodies.

Authentication and permission failures (401/403) use the spec's authentication error body;
everything else uses the API error envelope (contract §3).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ErrorDetail:
    field: str
    message: str


class AppError(Exception):
    status_code = 500
    code = "INTERNAL_ERROR"
    default_message = "An unexpected error occurred"

    def __init__(
        self,
        message: str | None = None,
        *,
        details: list[ErrorDetail] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.message = message or self.default_message
        self.details = details
        self.headers = headers or {}
        super().__init__(self.message)


class ValidationFailed(AppError):
    status_code = 422
    code = "VALIDATION_ERROR"
    default_message = "The request is not valid"

    @classmethod
    def on(cls, field: str, message: str) -> ValidationFailed:
        return cls(details=[ErrorDetail(field, message)])


class NotFound(AppError):
    status_code = 404
    code = "NOT_FOUND"
    default_message = "The resource does not exist"


class Conflict(AppError):
    status_code = 409
    code = "CONFLICT"
    default_message = "The request conflicts with the resource's current state"


class InvalidStatusTransition(AppError):
    status_code = 409
    code = "INVALID_STATUS_TRANSITION"
    default_message = "This status change is not allowed"


class PayloadTooLarge(AppError):
    status_code = 413
    code = "PAYLOAD_TOO_LARGE"
    default_message = "The request body is too large"


class UnsupportedMediaType(AppError):
    status_code = 415
    code = "UNSUPPORTED_MEDIA_TYPE"
    default_message = "The content type is not supported"


class MethodNotAllowed(AppError):
    status_code = 405
    code = "METHOD_NOT_ALLOWED"
    default_message = "The method is not allowed on this resource"


class RateLimited(AppError):
    status_code = 429
    code = "RATE_LIMITED"
    default_message = "Too many requests"


class ProviderUnavailable(AppError):
    """The provider did not answer, or answered with something unusable: nothing the caller did
    wrong, so not a 401; try again later."""

    status_code = 503
    code = "SSO_PROVIDER_UNAVAILABLE"
    default_message = "The single sign-on provider cannot be reached; try again later"


class AuthError(Exception):
    """401/403 with the authentication error body: `{error, error_description, error_code, ...}`."""

    status_code = 401
    error = "unauthorized"

    def __init__(self, error_code: str, description: str) -> None:
        self.error_code = error_code
        self.description = description
        super().__init__(description)


class Unauthorized(AuthError):
    status_code = 401
    error = "unauthorized"


class Forbidden(AuthError):
    status_code = 403
    error = "forbidden"


# The catalogue of authentication errors (contract §3), so the codes live in one place.
def invalid_token() -> Unauthorized:
    return Unauthorized("AUTH_001", "The access token is invalid, expired or revoked")


def no_credentials() -> Unauthorized:
    return Unauthorized("AUTH_002", "Authentication is required")


def invalid_api_key() -> Unauthorized:
    return Unauthorized("AUTH_003", "The API key is unknown, revoked or expired")


def bad_login() -> Unauthorized:
    return Unauthorized("AUTH_004", "Wrong email or password")


def invalid_refresh_token() -> Unauthorized:
    return Unauthorized("AUTH_005", "The refresh token is invalid, expired, reused or revoked")


def user_disabled() -> Unauthorized:
    return Unauthorized("AUTH_006", "The user is disabled")


def permission_missing(permission: str) -> Forbidden:
    return Forbidden("AUTH_010", f"This request needs the permission {permission}")


def admin_required() -> Forbidden:
    return Forbidden("AUTH_011", "This endpoint needs an administrator's access token")


def sso_failed(reason: str) -> Unauthorized:
    """The sign-in through the provider failed (state, provider error, code exchange, ID token)."""
    return Unauthorized("AUTH_007", f"Single sign-on failed: {reason}")
