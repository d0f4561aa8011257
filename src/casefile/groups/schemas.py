from __future__ import annotations

from pydantic import Field

from casefile.schemas import InModel, OutModel, Timestamp

MAX_GROUP_MEMBERS = 5000


class GroupCreate(InModel):
    name: str = Field(min_length=1, max_length=200)
    description: str | None = Field(default=None, max_length=2000)


class GroupUpdate(InModel):
    not_null = ("name",)
    name: str | None = Field(default=None, min_length=1, max_length=200)
    description: str | None = Field(default=None, max_length=2000)


class GroupMembers(InModel):
    """The whole member list: PUT replaces it."""

    user_ids: list[str] = Field(max_length=MAX_GROUP_MEMBERS)


class GroupOut(OutModel):
    id: str
    name: str
    description: str | None
    member_ids: list[str]
    created_at: Timestamp
    updated_at: Timestamp
