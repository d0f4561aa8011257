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
