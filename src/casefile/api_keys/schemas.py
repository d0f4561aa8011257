from __future__ import annotations

from typing import Annotated

from pydantic import AwareDatetime, Field, WithJsonSchema, field_validator

from casefile.auth.permissions import ACTIONS, RESOURCES, is_valid_permission
from casefile.schemas import InModel, OutModel, Timestamp

MAX_KEY_CASES = 1000

# Every name `is_valid_permission` accepts, published as an enum.
PermissionName = Annotated[
    str,
    WithJsonSchema(
        {"type": "string", "enum": [f"{a}:{r}" for a in (*ACTIONS, "*") for r in (*RESOURCES, "*")]}
    ),
]


class ApiKeyCreate(InModel):
    name: str = Field(min_length=1, max_length=200)
    permissions: list[PermissionName] = Field(
        min_length=1,
        max_length=50,
        description=f"`<action>:<resource>`; actions {', '.join(ACTIONS)}; resources {', '.join(RESOURCES)}; "
        "`*` stands for either part",
    )
    expires_at: AwareDatetime | None = Field(
        default=None, description="ISO 8601 with a time zone; in the future"
    )
    case_ids: list[str] | None = Field(
        default=None,
        max_length=MAX_KEY_CASES,
        description="Limit the key to these cases (it still sees only what its creator may see)",
    )

    @field_validator("case_ids")
    @classmethod
    def distinct_cases(cls, value: list[str] | None) -> list[str] | None:
        return None if value is None else list(dict.fromkeys(value))

    @field_validator("permissions")
    @classmethod
    def known_permissions(cls, value: list[str]) -> list[str]:
        unknown = [p for p in value if not is_valid_permission(p)]
        if unknown:
            raise ValueError(f"Unknown permission(s): {', '.join(unknown)}")
        return list(dict.fromkeys(value))


class ApiKeyOut(OutModel):
    id: str
    name: str
    prefix: str
    permissions: list[str]
    case_ids: list[str] | None
    expires_at: Timestamp | None
    created_at: Timestamp
    created_by: str | None
    last_used_at: Timestamp | None
    revoked_at: Timestamp | None


class ApiKeyCreated(ApiKeyOut):
    key: str = Field(description="The secret key. Shown only in this answer; store it now.")
