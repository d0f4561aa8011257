from __future__ import annotations

import json
from typing import Any

from pydantic import ConfigDict, Field, ValidationError, field_validator, model_validator

from casefile.access.visibility import VisibleOut
from casefile.ai.schemas import DocumentAi
from casefile.auth.permissions import Permission
from casefile.error_handlers import validation_details
from casefile.errors import ErrorDetail, ValidationFailed
from casefile.schemas import InModel, OutModel, Timestamp, published_text

MAX_TAGS = 50
Tags = list[str]

PROCESSING_STATUSES = ("pending", "processing", "completed", "failed", "skipped")
TITLE_REQUIRED = "Title is required"


def _clean_tags(values: list[str]) -> list[str]:
    tags = [t.strip() for t in values if t and t.strip()]
    for tag in tags:
        if len(tag) > 100:
            raise ValueError("Each tag is at most 100 characters")
    tags = list(dict.fromkeys(tags))
    if len(tags) > MAX_TAGS:
        raise ValueError(f"At most {MAX_TAGS} tags")
    return tags


def parse_tag_fields(values: list[str]) -> list[str]:
    """Tags as a form sends them (docs/api-conventions.md#documents): repeated fields, one comma-separated
    value, or a JSON array string."""
    tags: list[str] = []
    for value in values:
        stripped = value.strip()
        if stripped.startswith("{"):
            # A JSON object is not a list of tags, nor a tag: it is a client sending the wrong thing.
            raise ValueError("Tags are strings: repeated fields, comma-separated, or a JSON array")
        if stripped.startswith("["):
            try:
                decoded = json.loads(stripped)
            except json.JSONDecodeError as exc:
                raise ValueError("Tags look like a JSON array but are not valid JSON") from exc
            if not isinstance(decoded, list) or not all(isinstance(t, str) for t in decoded):
                raise ValueError("A JSON array of tags must hold strings")
            tags.extend(decoded)
        else:
            tags.extend(stripped.split(","))
    return _clean_tags(tags)


class DocumentFields(InModel):
    title: str | None = Field(default=None, max_length=500)
    document_type: str | None = Field(default=None, max_length=100)
    tags: Tags | None = None
    description: str | None = Field(default=None, max_length=20_000)

    @field_validator("tags")
    @classmethod
    def clean_tags(cls, value: Tags | None) -> Tags | None:
        return None if value is None else _clean_tags(value)


class DocumentUpdate(DocumentFields):
    """PUT and PATCH alike: any subset of title, document_type, tags, description. A title given
    is non-blank text ("Title is required", from the service)."""

    model_config = ConfigDict(json_schema_extra=published_text("title", 500))
    not_null = ("title",)


class UploadForm(DocumentFields):
    """The text fields of an upload, read from the multipart form."""

    @classmethod
    def from_fields(cls, fields: dict[str, list[str]]) -> UploadForm:
        known = {"title", "document_type", "tags", "description"}
        problems = [ErrorDetail(name, "Unknown field") for name in fields if name not in known]
        values: dict[str, Any] = {name: vals[-1] for name, vals in fields.items() if name in known - {"tags"}}
        if "tags" in fields:
            try:
                values["tags"] = parse_tag_fields(fields["tags"])
            except ValueError as exc:
                problems.append(ErrorDetail("tags", str(exc)))
        try:
            form = cls(**values)
        except ValidationError as exc:
            problems.extend(validation_details(exc.errors()))
            form = cls()
        if problems:
            raise ValidationFailed(details=problems)
        return form


class DocumentOut(VisibleOut):
    read_permission = Permission.READ_DOCUMENTS

    id: str
    case_id: str
    title: str
    document_type: str | None
    tags: list[str]
    description: str | None
    file_name: str
    file_size: int
    file_type: str
    sha256: str
    uploaded_by: str | None
    uploaded_via_key: str | None
    uploaded_at: Timestamp
    updated_at: Timestamp
    processing_status: str
    version: int = Field(
        description="The current version's number (docs/api-conventions.md#document-versions)"
    )
    ai: DocumentAi

    @model_validator(mode="after")
    def _stale(self) -> DocumentOut:
        """An AI result made from an earlier version says so (`stale: true`) until reprocessed."""
        if self.ai is not None and "processed_at" in self.ai:
            self.ai = {**self.ai, "version": self.ai.get("version", 1)}
            self.ai["stale"] = self.ai["version"] != self.version
        return self


class DocumentVersionOut(OutModel):
    """One version of a document's content (`GET /documents/{id}/versions`)."""

    document_id: str
    version: int = Field(description="From 1; the highest is the document's current version")
    file_name: str
    file_size: int
    file_type: str
    sha256: str = Field(description="Its content's SHA-256: also its content's ETag")
    uploaded_by: str | None
    uploaded_via_key: str | None
    uploaded_at: Timestamp
