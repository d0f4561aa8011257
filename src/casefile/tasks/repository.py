"""Task queries: the lookup by id and how tasks are listed."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, time

from sqlalchemy import ColumnElement, and_, case, func, or_
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.cases.schemas import PRIORITIES
from casefile.errors import ValidationFailed
from casefile.listing import Filter, ListSpec, projectable
from casefile.models import Task
from casefile.tasks.schemas import TASK_STATUSES, TaskOut

# Where a task without a due date sorts: after every real one (the same on both databases, which
# order NULLs differently).
NO_DUE_DATE = datetime(9999, 12, 31, tzinfo=UTC)


def due_sort_key(due_date: date | None, due_datetime: datetime | None) -> datetime:
    if due_datetime is not None:
        return due_datetime
    if due_date is not None:
        return datetime.combine(due_date, time(0), tzinfo=UTC)
    return NO_DUE_DATE


async def _search_tasks(session: AsyncSession, words: list[str]) -> ColumnElement[bool]:
    # Titles are short: a substring match per word (words are letters and digits only).
    return and_(*(func.lower(Task.title).like(f"%{w}%") for w in words))


def _day(name: str, values: list[str]) -> date:
    if len(values) != 1:
        raise ValidationFailed.on(name, "Give one date")
    try:
        return date.fromisoformat(values[0])
    except ValueError:
        raise ValidationFailed.on(name, "Give a date such as 2027-01-15") from None


def _due_from(session: AsyncSession, values: list[str]) -> ColumnElement[bool]:
    return Task.due_date >= _day("due_from", values)


def _due_to(session: AsyncSession, values: list[str]) -> ColumnElement[bool]:
    return Task.due_date <= _day("due_to", values)


def _assignee(session: AsyncSession, values: list[str]) -> ColumnElement[bool]:
    # `none` asks for unassigned tasks (`me` was replaced by the caller's id in the service).
    ids = [v for v in values if v != "none"]
    conditions = [Task.assignee_id.in_(ids)] if ids else []
    if "none" in values:
        conditions.append(Task.assignee_id.is_(None))
    return or_(*conditions)


_TASK_FILTERS: dict[str, Filter] = {
    "status": Task.status,
    "priority": Task.priority,
    "assignee_id": _assignee,
    "deadline_id": Task.deadline_id,
    "due_from": _due_from,
    "due_to": _due_to,
}

# A case's tasks; across cases (`GET /tasks`) a `case_id` filter is added.
CASE_TASK_LIST = ListSpec(
    model=Task,
    sortable={
        "due_at": Task.due_sort,
        "created_at": Task.created_at,
        "updated_at": Task.updated_at,
        "title": func.lower(Task.title),
        "status": Task.status,
        "priority": case({p: i for i, p in enumerate(PRIORITIES)}, value=Task.priority),
    },
    default_sort="due_at",
    default_order="asc",
    tiebreak=Task.id,
    output_fields=projectable(TaskOut),
    filters=_TASK_FILTERS,
    filter_choices={"status": TASK_STATUSES, "priority": PRIORITIES},
    filter_formats={"due_from": "date", "due_to": "date"},
    search=_search_tasks,
)
TASK_LIST = replace(CASE_TASK_LIST, filters={**_TASK_FILTERS, "case_id": Task.case_id})
