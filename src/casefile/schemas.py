"""Types shared by the domain schemas."""

from __future__ import annotations

import re
import types
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Any, ClassVar, Union, get_args, get_origin

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    BeforeValidator,
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


# A date followed by a time: what a query parameter of the `date-time` format must hold.
_DATE_AND_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}")


def _date_and_time_text(value: Any) -> Any:
    """Query strings are text, and pydantic would read `0` or `2024-01-01` as a time; the
    published format is an ISO 8601 date *and* time, so only that is taken."""
    if not isinstance(value, str) or _DATE_AND_TIME.match(value) is None:
        raise ValueError("Expected an ISO 8601 date and time, e.g. 2024-01-31T09:00:00Z")
    return value


def _in_utc(value: datetime) -> datetime:
    """UTC when no zone is given; a time that leaves the calendar once moved to UTC (year 1 at
    +23:00, year 9999 at -23:00) is refused here rather than failing in the database."""
    try:
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    except OverflowError:
        raise ValueError("Out of the range of dates that can be stored") from None


# A time given in a query string (e.g. the audit trail's `since`/`until`), in UTC.
QueryTime = Annotated[datetime, BeforeValidator(_date_and_time_text), AfterValidator(_in_utc)]


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
        # JSON Schema's "integer" is any number with no fraction: 5.0 is the integer 5.
        return float in kinds or (int in kinds and value.is_integer())
    return False


def _stripped_length(schema: dict[str, Any]) -> None:
    """Strings are stripped before their length is checked (`str_strip_whitespace`): a minimum
    length is published as a pattern of that many characters between the spaces."""
    for branch in schema.get("anyOf", []):
        _stripped_length(branch)
    if isinstance(schema.get("items"), dict):
        _stripped_length(schema["items"])
    least = schema.get("minLength", 0)
    if schema.get("type") != "string" or least < 1 or {"pattern", "enum", "format"} & schema.keys():
        return
    if least == 1:
        schema["pattern"] = "^[^\\x00]*[^\\s\\x00][^\\x00]*$"
    else:
        schema["pattern"] = f"^\\s*[^\\s\\x00][^\\x00]{{{least - 2},}}[^\\s\\x00]\\s*$"


def published_text(name: str, max_length: int, *, required: bool = False) -> Callable[[dict[str, Any]], None]:
    """A model's `json_schema_extra` for a text field that the service checks itself (so that a
    missing or blank value gets its documented message, "Title is required"): published as what
    the service accepts, non-blank text (InModel adds the pattern), and, on a create, required."""

    def publish(schema: dict[str, Any]) -> None:
        schema["properties"][name] = {
            "type": "string",
            "minLength": 1,
            "maxLength": max_length,
            "title": name.capitalize(),
        }
        if required:
            schema["required"] = sorted({*schema.get("required", []), name})

    return publish


class InModel(BaseModel):
    """Request bodies: unknown fields are refused rather than silently ignored, and booleans,
    numbers and times are what JSON says they are: `0` or `"true"` for a boolean, `"5"` or `5.0`
    for an integer, a number for a time are refused (422) rather than coerced, so the published
    schema's types are the ones enforced."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    # Optional fields whose null the service refuses ("<name> cannot be null": leaving a field out
    # keeps it, null does not clear it). They are published without null, so that the schema
    # offers exactly what is accepted.
    not_null: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: Any, handler: Any) -> Any:
        schema = handler(core_schema)
        properties = handler.resolve_ref_schema(schema).get("properties", {})
        for name in cls.not_null:
            published = properties.get(name, {})
            branches = [b for b in published.pop("anyOf", []) if b.get("type") != "null"]
            if len(branches) == 1:
                published.update(branches[0])
                if published.get("default", ...) is None:
                    del published["default"]
            elif branches:
                published["anyOf"] = branches
        for published in properties.values():
            _stripped_length(published)
        return schema

    @field_validator("*", mode="before")
    @classmethod
    def _json_scalars_are_not_coerced(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None or info.field_name is None:
            return value
        kinds = _scalar_types(cls.model_fields[info.field_name].annotation)
        if kinds and not _is_exactly(value, kinds):
            raise ValueError(f"Input should be {_EXPECTED[min(kinds, key=list(_EXPECTED).index)]}")
        return value

    @field_validator("*", mode="after")
    @classmethod
    def _times_fit_in_utc(cls, value: Any) -> Any:
        """Every time is stored in UTC: one that leaves the calendar when moved there (year 9999
        at -23:00) is refused like any other invalid value, not met later as an overflow."""
        if isinstance(value, datetime) and value.tzinfo is not None:
            _in_utc(value)
        return value
