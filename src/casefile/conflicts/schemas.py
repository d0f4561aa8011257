from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from casefile.schemas import InModel, OutModel, Timestamp

Source = Literal["contact", "alias", "party", "client_name"]
MAX_NAMES = 20

CheckName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=300)]


class ConflictCheckCreate(InModel):
    names: list[CheckName] = Field(min_length=1, max_length=MAX_NAMES)
    case_id: str | None = Field(default=None, min_length=1, max_length=40)


class ConflictHit(OutModel):
    name: str = Field(description="The name of the request that matched")
    matched: str | None = Field(description="The name or alias found (null on a hidden matter)")
    score: float = Field(ge=0, le=1, description="Similarity of the normalised names, 0 to 1")
    source: Source
    contact_id: str | None
    case_id: str | None = Field(description="The matter; null for a contact that is no case's party")
    role: str | None = Field(description="The party's role in the matter (client for a client name)")
    visible: bool = Field(
        description="False: a matter the caller may not see; only case_id, score and source"
    )


class ConflictCheckOut(OutModel):
    id: str
    case_id: str | None
    names: list[str]
    created_by: str | None
    created_at: Timestamp
    hits: list[ConflictHit]
