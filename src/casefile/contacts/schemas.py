from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, ConfigDict, EmailStr, Field, StringConstraints, field_validator

from casefile.access.visibility import VisibleOut
from casefile.auth.permissions import Permission
from casefile.schemas import InModel, OutModel, Timestamp, published_text

Kind = Literal["person", "organization"]
KINDS: tuple[str, ...] = Kind.__args__  # type: ignore[attr-defined]
Role = Literal[
    "client", "adverse_party", "opposing_counsel", "co_counsel", "witness", "expert", "judge", "related"
]
ROLES: tuple[str, ...] = Role.__args__  # type: ignore[attr-defined]

NAME_REQUIRED = "Name is required"
MAX_ITEMS = 50

Text100 = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)]
Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=300)]


def _distinct(values: list[Any]) -> list[Any]:
    """Each value once, in the order given (a contact's aliases or tags are a set that keeps order)."""
    seen: list[Any] = []
    for value in values:
        if value not in seen:
            seen.append(value)
    return seen


class Address(InModel):
    label: str | None = Field(default=None, max_length=100)
    street: str | None = Field(default=None, max_length=500)
    city: str | None = Field(default=None, max_length=200)
    region: str | None = Field(default=None, max_length=200)
    postal_code: str | None = Field(default=None, max_length=40)
    country: str | None = Field(default=None, max_length=100)


class ContactFields(InModel):
    kind: Kind | None = None
    # Checked by the service, so that a missing name has the documented message.
    name: str | None = Field(default=None, max_length=300)
    aliases: list[Name] | None = Field(default=None, max_length=MAX_ITEMS)
    emails: list[EmailStr] | None = Field(default=None, max_length=MAX_ITEMS)
    phones: list[Text100] | None = Field(default=None, max_length=MAX_ITEMS)
    addresses: list[Address] | None = Field(default=None, max_length=MAX_ITEMS)
    identifiers: dict[Text100, Annotated[str, StringConstraints(max_length=200)]] | None = Field(
        default=None, max_length=MAX_ITEMS, description='e.g. {"company_number": "01234567"}'
    )
    tags: list[Text100] | None = Field(default=None, max_length=MAX_ITEMS)
    notes: str | None = Field(default=None, max_length=20_000)
    # Values of the firm's contact custom fields by name (docs/api-conventions.md#custom-fields).
    custom_fields: dict[str, Any] | None = Field(default=None, max_length=200)

    @field_validator("aliases", "emails", "phones", "tags")
    @classmethod
    def distinct(cls, value: list[str] | None) -> list[str] | None:
        return None if value is None else _distinct(value)


class ContactCreate(ContactFields):
    model_config = ConfigDict(json_schema_extra=published_text("name", 300, required=True))

    kind: Kind = "person"


class ContactUpdate(ContactFields):
    """PATCH: any subset of the writable fields; absent fields stay as they are."""

    model_config = ConfigDict(json_schema_extra=published_text("name", 300))
    not_null = ("kind", "name")


class ContactOut(VisibleOut):
    read_permission = Permission.READ_CONTACTS

    id: str
    kind: str
    name: str
    aliases: list[str]
    emails: list[str]
    phones: list[str]
    addresses: list[dict[str, Any]]
    identifiers: dict[str, str]
    tags: list[str]
    notes: str | None
    custom_fields: Annotated[dict[str, Any], BeforeValidator(lambda v: {} if v is None else v)]
    created_by: str | None
    created_at: Timestamp
    updated_at: Timestamp


class PartyCreate(InModel):
    contact_id: str = Field(min_length=1, max_length=40)
    role: Role
    starts_on: date | None = None
    ends_on: date | None = None


class PartyOut(OutModel):
    id: str
    case_id: str
    contact_id: str
    contact_name: str
    contact_kind: str
    role: str
    starts_on: date | None
    ends_on: date | None
    conflict_check_id: str | None = Field(
        description="For an adverse party: the conflict check run when it was added"
    )
    created_by: str | None
    created_at: Timestamp
