from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from casefile.schemas import InModel, OutModel, Timestamp, published_text

Format = Literal["plain", "markdown"]
FORMATS: tuple[str, ...] = Format.__args__  # type: ignore[attr-defined]
BODY_REQUIRED = "Body is required"
MAX_BODY = 100_000


class NoteCreate(InModel):
    # Checked by the service, so that a missing body has the documented message.
    model_config = ConfigDict(json_schema_extra=published_text("body", MAX_BODY, required=True))
    body: str | None = Field(default=None, max_length=MAX_BODY)
    format: Format = Field(default="plain", description="How to read `body`; stored as given either way")
    pinned: bool = False


class NoteUpdate(InModel):
    """PATCH: any subset; each change is a new version in the note's history."""

    model_config = ConfigDict(json_schema_extra=published_text("body", MAX_BODY))
    not_null = ("body", "format", "pinned")

    body: str | None = Field(default=None, max_length=MAX_BODY)
    format: Format | None = None
    pinned: bool | None = None


class NoteOut(OutModel):
    id: str
    case_id: str | None
    contact_id: str | None
    author_id: str | None
    body: str
    format: str
    pinned: bool
    version: int
    created_at: Timestamp
    updated_at: Timestamp


class NoteVersionOut(OutModel):
    version: int
    body: str
    format: str
    pinned: bool
    edited_by: str | None
    edited_at: Timestamp
