"""Types shared by the domain schemas."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, PlainSerializer

from casefile.clock import format_timestamp

# Every timestamp leaves the service as ISO 8601 UTC with a `Z` (docs/api-conventions.md#envelopes).
Timestamp = Annotated[datetime, PlainSerializer(format_timestamp, return_type=str)]


class OutModel(BaseModel):
    """Response shapes, read from ORM objects."""

    model_config = ConfigDict(from_attributes=True)

    @classmethod
    def dump(cls, obj: Any) -> dict[str, Any]:
        return cls.model_validate(obj).model_dump(mode="json")


class InModel(BaseModel):
    """Request bodies: unknown fields are refused rather than silently ignored."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)
