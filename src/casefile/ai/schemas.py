from __future__ import annotations

from pydantic import Field

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
