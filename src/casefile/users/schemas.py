from __future__ import annotations

from typing import Annotated, Any, Literal

from email_validator import EmailNotValidError, validate_email
from pydantic import AfterValidator, Field

from casefile.access.visibility import VisibleOut
from casefile.auth.permissions import Permission
from casefile.schemas import InModel, Timestamp


def _valid_email(value: str) -> str:
    # Syntax only (no DNS look-ups at request time); the RFC 2606 `.test` names are allowed so
    # that test and staging set-ups can use them.
    try:
        return validate_email(value, check_deliverability=False, test_environment=True).normalized
    except EmailNotValidError as exc:
        raise ValueError(str(exc)) from exc


Email = Annotated[str, Field(max_length=320), AfterValidator(_valid_email)]

Role = Literal["admin", "attorney", "paralegal", "viewer"]
PASSWORD_RULES: dict[str, Any] = {
    "min_length": 12,
    "max_length": 1024,
    "description": "At least 12 characters",
}


class UserOut(VisibleOut):
    read_permission = Permission.READ_USERS

    id: str
    email: str
    name: str
    role: Role
    active: bool
    created_at: Timestamp
    updated_at: Timestamp
    last_login_at: Timestamp | None


class UserCreate(InModel):
    email: Email
    name: str = Field(min_length=1, max_length=200)
    password: str = Field(**PASSWORD_RULES)
    role: Role = "viewer"


class UserUpdate(InModel):
    name: str | None = Field(default=None, min_length=1, max_length=200)
    role: Role | None = None
    active: bool | None = None
    password: str | None = Field(default=None, **PASSWORD_RULES)
