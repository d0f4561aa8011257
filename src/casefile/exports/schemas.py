from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from casefile.schemas import OutModel, Timestamp


class ExportError(OutModel):
    code: str
    message: str


class ExportOut(OutModel):
    """An export as it stands: `files_done` of `total_files` written (`bytes_done` bytes of
    content), then, once `succeeded`, the zip's `sha256` and `size` (`GET /exports/{id}/content`)."""

    id: str
    case_id: str
    status: Literal["pending", "running", "succeeded", "failed"]
    total_files: int = Field(description="Files the zip will hold (0 until the worker has counted them)")
    files_done: int
    bytes_done: int
    sha256: str | None = Field(description="The zip's SHA-256 (its ETag), once finished")
    size: int | None = Field(description="The zip's size in bytes, once finished")
    summary: dict[str, Any] | None = Field(
        description="What the zip holds: counts per section, the sections left out and why, and "
        "the signed tree head its audit entries are proven against"
    )
    error: ExportError | None
    requested_by: str | None
    created_at: Timestamp
    updated_at: Timestamp
    finished_at: Timestamp | None
