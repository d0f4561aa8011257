from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from casefile.cases.schemas import MAX_TAGS, Status, Tag
from casefile.schemas import InModel, OutModel, Timestamp

MAX_CASES = 1000
CaseId = Annotated[str, Field(min_length=1, max_length=40)]


class MoveStatus(InModel):
    type: Literal["status"]
    status: Status


class Assign(InModel):
    type: Literal["assign"]
    user_id: str = Field(min_length=1, max_length=40)


class TagCases(InModel):
    type: Literal["tag"]
    add: list[Tag] = Field(default_factory=list, max_length=MAX_TAGS)
    remove: list[Tag] = Field(default_factory=list, max_length=MAX_TAGS)

    @model_validator(mode="after")
    def _something(self) -> TagCases:
        if not self.add and not self.remove:
            raise ValueError("Give tags to add or to remove")
        return self


class SetCustomField(InModel):
    type: Literal["set_custom_field"]
    name: str = Field(min_length=1, max_length=64)
    value: Any = Field(description="The value (null removes it)")


# A plain union (InModel's validators rule out a discriminator): `type` picks the one that fits.
BulkAction = MoveStatus | Assign | TagCases | SetCustomField


class BulkRequest(InModel):
    action: BulkAction
    case_ids: list[CaseId] = Field(min_length=1, max_length=MAX_CASES)

    @field_validator("case_ids")
    @classmethod
    def _each_once(cls, value: list[str]) -> list[str]:
        return list(dict.fromkeys(value))


class ItemError(OutModel):
    code: str
    message: str
    details: list[dict[str, str]] | None = None


class ItemResult(OutModel):
    case_id: str
    outcome: Literal["succeeded", "failed"]
    error: ItemError | None = None


class BulkJobOut(OutModel):
    """A bulk job as it stands: `processed` of `total` done, each with its outcome."""

    id: str
    status: Literal["pending", "running", "succeeded", "failed"]
    action: dict[str, Any]
    total: int
    processed: int
    succeeded: int
    failed: int
    results: list[ItemResult]
    requested_by: str | None
    created_at: Timestamp
    updated_at: Timestamp
    finished_at: Timestamp | None
