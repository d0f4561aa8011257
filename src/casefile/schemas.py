"""Types shared by the domain schemas."""

from __future__ import annotations

import types
from datetime import datetime
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    FutureDatetime,
    NaiveDatetime,
    PastDatetime,
    PlainSerializer,
    ValidationInfo,
    field_validator,
)

from casefile.clock import format_timestamp

# Every timestamp leaves the service as ISO 8601 UTC with a `Z` (docs/api-conventions.md#envelopes).
Timestamp = Annotated[datetime, PlainSerializer(format_timestamp, return_type=str)]


class OutModel(BaseModel):
    """Response shapes, read from ORM objects."""

    model_config = ConfigDict(from_attributes=True)

    @classmethod
    def dump(cls, obj: Any) -> dict[str, Any]:
        return cls.model_validate(obj).model_dump(mode="json")


_SCALARS = frozenset({bool, int, float, datetime})
_DATETIMES = frozenset({datetime, AwareDatetime, NaiveDatetime, FutureDatetime, PastDatetime})
_EXPECTED = {
    bool: "a boolean (true or false)",
    int: "an integer",
    float: "a number",
    datetime: "an ISO 8601 date and time",
}


def _scalar_types(annotation: Any) -> frozenset[Any]:
    """`int | None` → {int}; anything that is not a plain union of scalars → {} (not judged here)."""
    if get_origin(annotation) in (Union, types.UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
    else:
        members = [annotation]
    members = [datetime if m in _DATETIMES else m for m in members]
    return frozenset(members) if all(m in _SCALARS for m in members) else frozenset()


def _is_exactly(value: Any, kinds: frozenset[Any]) -> bool:
    if isinstance(value, str | datetime):  # a time is a string in JSON, never a unix number
        return datetime in kinds
    if isinstance(value, bool):
        return bool in kinds
    if isinstance(value, int):
        return int in kinds or float in kinds
    if isinstance(value, float):
        return float in kinds
    return False


class InModel(BaseModel):
    """Request bodies: unknown fields are refused rather than silently ignored, and booleans,
    numbers and times are what JSON says they are: `0` or `"true"` for a boolean, `"5"` or `5.0`
    for an integer, a number for a time are refused (422) rather than coerced, so the published
    schema's types are the ones enforced."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    @field_validator("*", mode="before")
    @classmethod
    def _json_scalars_are_not_coerced(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None or info.field_name is None:
            return value
        kinds = _scalar_types(cls.model_fields[info.field_name].annotation)
        if kinds and not _is_exactly(value, kinds):
            raise ValueError(f"Input should be {_EXPECTED[min(kinds, key=list(_EXPECTED).index)]}")
        return value
