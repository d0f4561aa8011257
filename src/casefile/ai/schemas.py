from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field, WithJsonSchema

from casefile.schemas import OutModel, Timestamp


class JobOut(OutModel):
    """The queued job: its outcome arrives as events (`ai.processing_*`, `document.processed`) and
    on the document (`processing_status`, `ai`) or case (`ai`)."""

    job_id: str = Field(validation_alias="id")
    kind: str
    case_id: str
    document_id: str | None
    status: str
    queued_at: Timestamp = Field(validation_alias="created_at")


# The published shapes of the `ai` objects (casefile.ai.processing documents them). They describe,
# they do not validate: the stored dicts are returned as they are, and the fields grow with the
# pipeline, so every object admits more properties and requires none.
def _object(**properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def _array(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


_STRING: dict[str, Any] = {"type": "string"}
_INTEGER: dict[str, Any] = {"type": "integer"}
_PLACE = _object(page=_INTEGER, start=_INTEGER, end=_INTEGER)
_ENTITY = _object(text=_STRING, value={}, occurrences=_array(_PLACE))
_PROVENANCE = _object(pipeline_version=_STRING, embedding_model=_STRING, text_sha256=_STRING)

DOCUMENT_AI_SCHEMA: dict[str, Any] = {
    **_object(
        summary=_object(
            text=_STRING, sentences=_array(_object(text=_STRING, page=_INTEGER, start=_INTEGER, end=_INTEGER))
        ),
        language={"type": "string", "description": "ISO 639-1, or `und`"},
        page_count=_INTEGER,
        word_count=_INTEGER,
        entities=_object(
            people=_array(_ENTITY),
            organizations=_array(_ENTITY),
            dates=_array(_ENTITY),
            money=_array(_ENTITY),
            citations=_array(_ENTITY),
        ),
        suggested_type=_object(label=_STRING, confidence={"type": "number"}),
        keywords=_array(_STRING),
        extraction=_object(method=_STRING, truncated={"type": "boolean"}),
        provenance=_PROVENANCE,
        skipped_reason={"type": "string", "description": "Set instead of the rest when there was no text"},
        processed_at={"type": "string", "format": "date-time"},
        version={"type": "integer", "description": "The document version it was made from"},
        stale={
            "type": "boolean",
            "description": "True when the document has a newer version than the one it was made from",
        },
    ),
    "title": "DocumentAi",
    "description": "The document's AI processing output (docs/api-conventions.md#ai); null until processed.",
}

_MERGED_ENTITY = _object(text=_STRING, value={}, documents=_array(_STRING), mentions=_INTEGER)
CASE_AI_SCHEMA: dict[str, Any] = {
    **_object(
        summary=_object(
            text=_STRING,
            sentences=_array(
                _object(
                    document_id=_STRING,
                    version={"type": "integer", "description": "The document version it quotes"},
                    text=_STRING,
                    page=_INTEGER,
                    start=_INTEGER,
                    end=_INTEGER,
                )
            ),
        ),
        document_count=_INTEGER,
        document_types={"type": "object", "additionalProperties": _INTEGER},
        entities={"type": "object", "additionalProperties": _array(_MERGED_ENTITY)},
        key_dates=_array(_object(date=_STRING, text=_STRING, documents=_array(_STRING))),
        provenance=_object(
            pipeline_version=_STRING,
            embedding_model=_STRING,
            documents=_array(
                _object(
                    document_id=_STRING,
                    version={"type": "integer"},
                    pipeline_version={"type": ["string", "null"]},
                    text_sha256={"type": ["string", "null"]},
                )
            ),
        ),
        processed_at={"type": "string", "format": "date-time"},
        stale={
            "type": "boolean",
            "description": (
                "Set when a document it was made from was deleted, given a new version, or processed"
                " again since"
            ),
        },
        stale_reason={
            "type": "string",
            "enum": ["document_deleted", "document_reprocessed", "document_replaced"],
        },
    ),
    "title": "CaseAi",
    "description": "The case summary of `POST /cases/{id}/summarize`; null until it has run.",
}

DocumentAi = Annotated[
    dict[str, Any] | None, WithJsonSchema({"anyOf": [DOCUMENT_AI_SCHEMA, {"type": "null"}]})
]
CaseAi = Annotated[dict[str, Any] | None, WithJsonSchema({"anyOf": [CASE_AI_SCHEMA, {"type": "null"}]})]


class JobStatusOut(OutModel):
    """A job as it stands (docs/api-conventions.md#ai)."""

    id: str
    kind: str
    status: str
    case_id: str
    document_id: str | None
    attempts: int = Field(validation_alias="attempts_made")
    created_at: Timestamp
    started_at: Timestamp | None
    finished_at: Timestamp | None
    error: str | None = Field(validation_alias="last_error")


class ReprocessOut(BaseModel):
    queued: int = Field(description="Documents queued by this call (now `pending`)")
    remaining: int = Field(description="Documents still in the status asked for: call again for them")
