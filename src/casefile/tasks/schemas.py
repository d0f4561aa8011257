from __future__ import annotations

import re
from datetime import date, datetime
from typing import Annotated, Any, Literal

from pydantic import AwareDatetime, Field, PlainValidator, WithJsonSchema, model_validator

from casefile.access.visibility import VisibleOut
from casefile.auth.permissions import Permission
from casefile.cases.schemas import Priority
from casefile.clock import format_timestamp
from casefile.schemas import InModel, Timestamp

TaskStatus = Literal["open", "done", "cancelled"]
TASK_STATUSES: tuple[str, ...] = TaskStatus.__args__  # type: ignore[attr-defined]
MAX_REMINDERS = 10

_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
DUE_AT_HELP = "A date (2027-01-15) or a date-time with its offset (2027-01-15T17:00:00-05:00 or …Z)"


def parse_due(value: Any) -> date | datetime:
    """`due_at` is a calendar date or an instant: a date-time without an offset would mean
    different instants to different readers, so it is refused."""
    if isinstance(value, datetime):
        return value
    if isinstance(value, str):
        if _DATE_ONLY.fullmatch(value):
            try:
                return date.fromisoformat(value)
            except ValueError:
                raise ValueError("Not a valid date") from None
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            raise ValueError(DUE_AT_HELP) from None
        if parsed.tzinfo is None:
            raise ValueError("A date-time needs its offset (Z or ±hh:mm)")
        return parsed
    raise ValueError(DUE_AT_HELP)


DueAt = Annotated[
    date | datetime,
    PlainValidator(parse_due),
    WithJsonSchema(
        {
            "anyOf": [{"type": "string", "format": "date"}, {"type": "string", "format": "date-time"}],
            "description": DUE_AT_HELP,
            "examples": ["2027-01-15"],
        }
    ),
]


class Reminder(InModel):
    """A reminder: `minutes_before` the due moment (of an all-day due date: before the start of
    that day), or at a fixed instant `at`. Exactly one of the two."""

    minutes_before: int | None = Field(default=None, ge=0, le=525_600)
    at: AwareDatetime | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> Reminder:
        if (self.minutes_before is None) == (self.at is None):
            raise ValueError("Give exactly one of minutes_before and at")
        return self

    def stored(self) -> dict[str, Any]:
        if self.at is not None:
            return {"at": format_timestamp(self.at)}
        return {"minutes_before": self.minutes_before}


class TaskCreate(InModel):
    title: str = Field(min_length=1, max_length=500)
    description: str | None = Field(default=None, max_length=20_000)
    assignee_id: str | None = Field(default=None, min_length=1, max_length=40)
    due_at: DueAt | None = None
    priority: Priority = "medium"
    status: TaskStatus = "open"
    reminders: list[Reminder] = Field(default_factory=list, max_length=MAX_REMINDERS)


class TaskUpdate(InModel):
    """Any subset of the writable fields; absent fields stay. `null` clears `description`,
    `assignee_id`, `due_at` and `reminders`."""

    not_null = ("title", "priority", "status")

    title: str | None = Field(default=None, min_length=1, max_length=500)
    description: str | None = Field(default=None, max_length=20_000)
    assignee_id: str | None = Field(default=None, min_length=1, max_length=40)
    due_at: DueAt | None = None
    priority: Priority | None = None
    status: TaskStatus | None = None
    reminders: list[Reminder] | None = Field(default=None, max_length=MAX_REMINDERS)


class TaskOut(VisibleOut):
    read_permission = Permission.READ_CASES  # a task is part of its case

    id: str
    case_id: str
    title: str
    description: str | None
    assignee_id: str | None
    due_at: str | None = Field(description=DUE_AT_HELP + "; a date-time is returned in UTC")
    priority: str
    status: str
    reminders: list[dict[str, Any]]
    deadline_id: str | None
    rule_id: str | None
    created_by: str | None
    created_at: Timestamp
    updated_at: Timestamp
    completed_at: Timestamp | None
