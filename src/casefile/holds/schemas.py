from __future__ import annotations

from pydantic import Field

from casefile.schemas import InModel, OutModel, Timestamp


class HoldCreate(InModel):
    reason: str = Field(min_length=1, max_length=2000)


class HoldOut(OutModel):
    id: str
    case_id: str
    reason: str
    created_by: str | None
    created_at: Timestamp
    released_at: Timestamp | None
    released_by: str | None
