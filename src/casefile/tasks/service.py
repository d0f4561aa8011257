"""Task rules: who a task may be assigned to, its due moment (a date or an instant), status and
completion, reminders, and the events each change emits. Access to a task is access to its case
(`cases.access`)."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.access.holds import ensure_no_hold
from casefile.access.matter import Level, row_in_case, visible_to
from casefile.audit import service as audit
from casefile.auth.permissions import Principal
from casefile.clock import utcnow
from casefile.errors import ErrorDetail, NotFound, ValidationFailed
from casefile.events import payloads
from casefile.events.outbox import emit
from casefile.listing import ListQuery, Page, fetch_page
from casefile.models import Case, Task, User
from casefile.tasks.repository import CASE_TASK_LIST, TASK_LIST, due_sort_key
from casefile.tasks.schemas import TaskCreate, TaskUpdate


def set_due(task: Task, due: date | datetime | None) -> None:
    """A date-time keeps its instant (UTC) and the calendar day it names where it was given."""
    if isinstance(due, datetime):
        task.due_datetime, task.due_date = due, due.date()
    else:
        task.due_datetime, task.due_date = None, due
    task.due_sort = due_sort_key(task.due_date, task.due_datetime)


async def check_assignee(session: AsyncSession, user_id: str | None) -> None:
    if user_id is not None and await session.get(User, user_id) is None:
        raise NotFound.referenced([ErrorDetail("assignee_id", "User not found")])


async def task_for(session: AsyncSession, principal: Principal, task_id: str, level: Level) -> Task:
    """The task if its case is visible to `principal` with `level`; a task on a case the caller
    may not see is "Task not found", like one that does not exist."""
    return await row_in_case(session, principal, Task, task_id, level, not_found="Task not found")


async def read_task(session: AsyncSession, principal: Principal, task_id: str) -> Task:
    """`GET /tasks/{id}`: the task, recorded as read."""
    task = await task_for(session, principal, task_id, Level.READ)
    await audit.record_read(
        session, "task.read", resource_type="task", resource_id=task.id, case_id=task.case_id
    )
    return task


async def list_case_tasks(
    session: AsyncSession, principal: Principal, case: Case, query: ListQuery
) -> Page[Task]:
    page = await fetch_page(
        session, CASE_TASK_LIST, _with_me(query, principal), conditions=[Task.case_id == case.id]
    )
    await audit.record_read(session, "task.list", resource_type="case", resource_id=case.id, case_id=case.id)
    return page


def _with_me(query: ListQuery, principal: Principal) -> ListQuery:
    """`assignee_id=me`: the calling user (an API key's creator); nobody for a key without one."""
    wanted = query.filters.get("assignee_id")
    if not wanted or "me" not in wanted:
        return query
    me = principal.user_id or ""
    filters = {**query.filters, "assignee_id": [me if v == "me" else v for v in wanted]}
    return replace(query, filters=filters)


async def list_tasks(session: AsyncSession, principal: Principal, query: ListQuery) -> Page[Task]:
    """Tasks across every case the caller may see: the visibility rule is part of the query."""
    visible = Task.case_id.in_(select(Case.id).where(visible_to(principal)))
    page = await fetch_page(session, TASK_LIST, _with_me(query, principal), conditions=[visible])
    # Across cases: one entry for the request, naming the cases the page showed.
    shown = sorted({task.case_id for task in page.rows})
    await audit.record_read(session, "task.list", details={"case_ids": shown, **query.filters})
    return page


async def create_task(session: AsyncSession, principal: Principal, case: Case, body: TaskCreate) -> Task:
    await check_assignee(session, body.assignee_id)
    now = utcnow()
    task = Task(
        case_id=case.id,
        title=body.title,
        description=body.description,
        assignee_id=body.assignee_id,
        priority=body.priority,
        status=body.status,
        reminders=[r.stored() for r in body.reminders],
        created_by=principal.actor_id,
        created_at=now,
        updated_at=now,
        completed_at=now if body.status == "done" else None,
    )
    set_due(task, body.due_at)
    session.add(task)
    await session.flush()
    await emit(session, "task.created", payloads.task_created(task))
    return task


async def update_task(session: AsyncSession, principal: Principal, task: Task, body: TaskUpdate) -> Task:
    await ensure_no_hold(session, task.case_id, "changing its tasks")
    values = body.model_dump(exclude_unset=True)
    problems = [name for name in ("title", "priority", "status") if name in values and values[name] is None]
    if problems:
        raise ValidationFailed.on(problems[0], f"{problems[0]} cannot be null")
    if "assignee_id" in values:
        await check_assignee(session, body.assignee_id)

    changes: dict[str, dict[str, Any]] = {}
    for name in ("title", "description", "assignee_id", "priority", "status"):
        if name in values and getattr(task, name) != values[name]:
            changes[name] = {"from": getattr(task, name), "to": values[name]}
            setattr(task, name, values[name])
    if "due_at" in values:
        before = task.due_at
        set_due(task, body.due_at)
        if task.due_at != before:
            changes["due_at"] = {"from": before, "to": task.due_at}
    if "reminders" in values:
        reminders = [r.stored() for r in (body.reminders or [])]
        if reminders != task.reminders:
            changes["reminders"] = {"from": task.reminders, "to": reminders}
            task.reminders = reminders
    if not changes:
        return task  # nothing changed: nothing is emitted
    if "status" in changes:
        task.completed_at = utcnow() if task.status == "done" else None
    task.updated_at = utcnow()
    await session.flush()
    await emit(session, "task.updated", payloads.task_updated(task, changes, principal.actor_id))
    return task


async def delete_task(session: AsyncSession, principal: Principal, task: Task) -> None:
    await ensure_no_hold(session, task.case_id, "deleting its tasks")
    await emit(session, "task.deleted", payloads.task_deleted(task, principal.actor_id))
    await session.delete(task)
    await session.flush()
