from __future__ import annotations

from pydantic import BaseModel

from casefile.schemas import Timestamp


class JobOut(BaseModel):
    """The queued job: its outcome arrives as events (`ai.processing_*`, `document.processed`) and
    on the document (`processing_status`, `ai`) or case (`ai`)."""

    job_id: str
    kind: str
    case_id: str
    document_id: str | None
    status: str
    queued_at: Timestamp
