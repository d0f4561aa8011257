from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, ConfigDict, Field, StringConstraints, field_validator

from casefile.access.visibility import VisibleOut
from casefile.ai.schemas import CaseAi
from casefile.auth.permissions import Permission
from casefile.schemas import InModel, OutModel, Timestamp, published_text

Status = Literal["intake", "active", "pending", "on_hold", "closed", "archived"]
Priority = Literal["low", "medium", "high", "urgent"]
Access = Literal["firm", "restricted"]
AccessLevel = Literal["read", "write", "manage"]
SubjectType = Literal["user", "group"]
STATUSES: tuple[str, ...] = Status.__args__  # type: ignore[attr-defined]
PRIORITIES: tuple[str, ...] = Priority.__args__  # type: ignore[attr-defined]

# The case lifecycle (docs/api-conventions.md#cases): the moves allowed from each status.
TRANSITIONS: dict[str, frozenset[str]] = {
    "intake": frozenset({"active", "closed"}),
    "active": frozenset({"pending", "on_hold", "closed"}),
    "pending": frozenset({"active", "on_hold", "closed"}),
    "on_hold": frozenset({"active", "pending", "closed"}),
    "closed": frozenset({"active", "archived"}),
    "archived": frozenset({"closed"}),
}

MAX_TAGS = 50
Tag = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)]

TITLE_REQUIRED = "Title is required"
CASE_NUMBER_TAKEN = "Case number must be unique"


class CaseFields(InModel):
    # `title` is checked by the service, so that a missing title and a duplicate case number are
    # reported together, each with its documented message; the schemas below still publish it as
    # required text.
    model_config = ConfigDict(json_schema_extra=published_text("title", 500))

    title: str | None = Field(default=None, max_length=500)
    case_number: str | None = Field(default=None, min_length=1, max_length=100)
    case_type: str | None = Field(default=None, min_length=1, max_length=100)
    jurisdiction: str | None = Field(default=None, min_length=1, max_length=100)
    client_name: str | None = Field(default=None, max_length=200)
    description: str | None = Field(default=None, max_length=20_000)
    # Values of the firm's custom fields by name (docs/api-conventions.md#custom-fields); on an
    # update, the fields given change (null removes a value) and the others stay.
    custom_fields: dict[str, Any] | None = Field(default=None, max_length=200)
    # The case's labels, each once (case kept as given; `tag=` filters ignore case).
    tags: list[Tag] | None = Field(default=None, max_length=MAX_TAGS)

    @field_validator("tags")
    @classmethod
    def _each_once(cls, value: list[str] | None) -> list[str] | None:
        return None if value is None else list(dict.fromkeys(value))


class CaseCreate(CaseFields):
    model_config = ConfigDict(json_schema_extra=published_text("title", 500, required=True))

    status: Status = "active"
    priority: Priority = "medium"
    # None: the server's default (CASEFILE_DEFAULT_CASE_ACCESS). Changed later with PUT /access.
    access: Access | None = None


class CaseUpdate(CaseFields):
    """PUT and PATCH alike: any subset of the writable fields; absent fields stay as they are."""

    not_null = ("title", "case_number", "status", "priority")

    status: Status | None = None
    priority: Priority | None = None


class AssigneeAdd(InModel):
    user_id: str = Field(min_length=1, max_length=40)


def _no_values(value: Any) -> Any:
    return {} if value is None else value


# A case written before custom fields existed (or by an older release) has none: `{}`.
CustomFieldValues = Annotated[dict[str, Any], BeforeValidator(_no_values)]
CaseTags = Annotated[list[str], BeforeValidator(lambda v: [] if v is None else v)]


class AssigneeOut(OutModel):
    """A user assigned to the case (`fields=assignees{id,name}`)."""

    id: str = Field(validation_alias="user_id")
    name: str
    email: str
    assigned_by: str | None
    assigned_at: Timestamp


class CaseOut(VisibleOut):
    read_permission = Permission.READ_CASES
    field_permissions = {"ai": Permission.READ_DOCUMENTS}  # the summary quotes the documents

    id: str
    title: str
    case_number: str
    case_type: str | None
    jurisdiction: str | None
    client_name: str | None
    description: str | None
    status: Status
    priority: Priority
    access: Access
    created_by: str | None
    assigned_to: list[str]
    assignees: list[AssigneeOut]
    custom_fields: CustomFieldValues
    tags: CaseTags
    template_id: str | None = None
    template_version: int | None = None
    created_at: Timestamp
    updated_at: Timestamp
    ai: CaseAi = None  # the case summary, once `POST /cases/{id}/summarize` has run


MAX_ACCESS_ENTRIES = 500


class GrantEntry(InModel):
    subject_type: SubjectType
    subject_id: str = Field(min_length=1, max_length=40)
    level: AccessLevel


class WallEntry(InModel):
    subject_type: SubjectType
    subject_id: str = Field(min_length=1, max_length=40)
    reason: str | None = Field(default=None, max_length=1000)


AccessEntry = GrantEntry | WallEntry


class CaseAccessBody(InModel):
    """GET and PUT /cases/{id}/access: PUT replaces the mode, the grants and the walls."""

    access: Access
    grants: list[GrantEntry] = Field(default_factory=list, max_length=MAX_ACCESS_ENTRIES)
    walls: list[WallEntry] = Field(default_factory=list, max_length=MAX_ACCESS_ENTRIES)
