from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel


class AuditEntryOut(BaseModel):
    """One entry as the API and the export show it; `hash` is the SHA-256 of the other fields'
    canonical JSON (docs/api-conventions.md#audit-trail)."""

    id: str
    seq: int
    at: str
    actor_type: Literal["user", "api_key", "system"]
    actor_id: str | None
    user_id: str | None
    action: str
    resource_type: str | None
    resource_id: str | None
    case_id: str | None
    outcome: Literal["success", "denied", "failed"]
    ip: str | None
    user_agent: str | None
    request_id: str | None
    details: dict[str, Any]
    prev_hash: str
    hash: str
