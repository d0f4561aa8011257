from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import JSON, Date, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from casefile.clock import format_timestamp, new_id, utcnow
from casefile.db import Base, UTCDateTime


class Task(Base):
    """A task on a case. Its due moment is a date (`due_date` alone) or a date-time (`due_datetime`,
    the instant in UTC, with `due_date` the calendar day in the offset it was given in); `due_sort`
    orders both kinds on one axis (a date sorts as the start of that day in UTC; no due date sorts
    after everything)."""

    __tablename__ = "tasks"

    id: Mapped[str] = mapped_column(String(40), primary_key=True, default=lambda: new_id("tsk"))
    case_id: Mapped[str] = mapped_column(ForeignKey("cases.id", ondelete="CASCADE"))
    title: Mapped[str] = mapped_column(String(500))
    description: Mapped[str | None] = mapped_column(Text)
    # A deleted user's tasks stay on the case, unassigned.
    assignee_id: Mapped[str | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    due_date: Mapped[date | None] = mapped_column(Date)
    due_datetime: Mapped[datetime | None] = mapped_column(UTCDateTime)
    due_sort: Mapped[datetime] = mapped_column(UTCDateTime)
    priority: Mapped[str] = mapped_column(String(20))
    status: Mapped[str] = mapped_column(String(20))
    # [{"minutes_before": n} | {"at": "…Z"}] (docs/api-conventions.md#tasks)
    reminders: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    # A task made by saving computed deadlines: the saved computation and the rule it comes from.
    deadline_id: Mapped[str | None] = mapped_column(ForeignKey("deadlines.id", ondelete="SET NULL"))
    rule_id: Mapped[str | None] = mapped_column(String(64))
    created_by: Mapped[str | None] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    completed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    __table_args__ = (
        Index("ix_tasks_case_id_due_sort", "case_id", "due_sort", "id"),
        # "My open tasks", soonest first: the cross-case list's usual query.
        Index("ix_tasks_assignee_status_due_sort", "assignee_id", "status", "due_sort", "id"),
        Index("ix_tasks_deadline_id", "deadline_id"),
    )

    @property
    def due_at(self) -> str | None:
        """What the API shows: the date, or the instant in UTC."""
        if self.due_datetime is not None:
            return format_timestamp(self.due_datetime)
        return self.due_date.isoformat() if self.due_date is not None else None
