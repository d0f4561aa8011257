from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, WithJsonSchema, field_validator

from casefile.schemas import InModel, OutModel, Timestamp

FieldType = Literal[
    "text",
    "long_text",
    "number",
    "decimal",
    "date",
    "boolean",
    "single_choice",
    "multiple_choice",
    "contact",
    "user",
]
Entity = Literal["case", "contact"]
FIELD_TYPES: tuple[str, ...] = FieldType.__args__  # type: ignore[attr-defined]
# A field's name is its key in `custom_fields`, in `cf.<name>=` and in `fields=custom_fields{…}`.
NAME_PATTERN = r"^[a-z][a-z0-9_]{0,63}$"
MAX_CHOICES = 200
CHOICE = Field(min_length=1, max_length=200)


# A case type as published (the validator below gives its own message).
CaseTypeText = Annotated[str, WithJsonSchema({"type": "string", "minLength": 1, "maxLength": 100})]


def _case_types(value: list[str]) -> list[str]:
    if any(not 0 < len(t) <= 100 for t in value):
        raise ValueError("A case type is 1 to 100 characters")
    return list(dict.fromkeys(t.lower() for t in value))


class FieldSetCreate(InModel):
    entity: Entity = "case"
    name: str = Field(min_length=1, max_length=200)
    # The case types the set applies to, matched ignoring case; none: every case.
    case_types: list[CaseTypeText] = Field(default_factory=list, max_length=100)
    position: int = Field(default=0, ge=0, le=10_000)

    @field_validator("case_types")
    @classmethod
    def _lower(cls, value: list[str]) -> list[str]:
        return _case_types(value)


class FieldSetUpdate(InModel):
    not_null = ("name", "case_types", "position")
    name: str | None = Field(default=None, min_length=1, max_length=200)
    case_types: list[CaseTypeText] | None = Field(default=None, max_length=100)
    position: int | None = Field(default=None, ge=0, le=10_000)

    @field_validator("case_types")
    @classmethod
    def _lower(cls, value: list[str] | None) -> list[str] | None:
        return None if value is None else _case_types(value)


class FieldSetOut(OutModel):
    id: str
    entity: Entity
    name: str
    case_types: list[str]
    position: int
    created_at: Timestamp
    updated_at: Timestamp


CASE_STATUSES = ("intake", "active", "pending", "on_hold", "closed", "archived")
# Checked by the service ("Each status must be one of: ..."); published as the enum it is.
StatusName = Annotated[str, Field(json_schema_extra={"enum": list(CASE_STATUSES)})]
# The validator `_choices` is the rule (its messages name it); these publish it in the schema:
# each choice 1 to 200 characters, each once.
Choice = Annotated[str, Field(json_schema_extra={"minLength": 1, "maxLength": 200})]
Choices = Annotated[list[Choice], Field(json_schema_extra={"uniqueItems": True})]


class FieldDefinition(InModel):
    """What may change after a field is made (its name, type and entity may not)."""

    label: str | None = Field(default=None, min_length=1, max_length=200)
    required: bool | None = None
    # Statuses a case may only move to with this field filled in (e.g. ["closed"]).
    required_for_statuses: list[StatusName] | None = Field(default=None, max_length=6)
    default: Any = None
    choices: Choices | None = Field(default=None, max_length=MAX_CHOICES)
    field_set_id: str | None = Field(default=None, max_length=40)
    position: int | None = Field(default=None, ge=0, le=10_000)

    @field_validator("choices")
    @classmethod
    def _choices(cls, value: list[str] | None) -> list[str] | None:
        if value is not None:
            if any(not 0 < len(c) <= 200 for c in value):
                raise ValueError("A choice is 1 to 200 characters")
            if len(set(value)) != len(value):
                raise ValueError("Each choice once")
        return value


class FieldCreate(FieldDefinition):
    entity: Entity = "case"
    name: str = Field(pattern=NAME_PATTERN)
    label: str = Field(min_length=1, max_length=200)
    field_type: FieldType


class FieldUpdate(FieldDefinition):
    # Left out keeps a value; null would not clear these (definitions._definition_values).
    not_null = ("label", "required", "required_for_statuses", "choices", "position")


class FieldOut(OutModel):
    id: str
    entity: Entity
    name: str
    label: str
    field_type: FieldType
    required: bool
    required_for_statuses: list[str]
    default: Any
    choices: list[str]
    field_set_id: str | None
    position: int
    created_at: Timestamp
    updated_at: Timestamp
