from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from casefile import envelope
from casefile.access.matter import Level, case_for
from casefile.access.visibility import IdOnlyOut
from casefile.envelope import DeletedOut, Envelope, PageEnvelope
from casefile.listing import ListQuery, Projection, fields_query, list_query, project
from casefile.request_scope import SessionDep
from casefile.tasks import service
from casefile.tasks.dependencies import TasksRead, TasksWrite
from casefile.tasks.repository import CASE_TASK_LIST, TASK_LIST
from casefile.tasks.schemas import TaskCreate, TaskOut, TaskUpdate

router = APIRouter(tags=["tasks"])

TaskListQuery = Annotated[ListQuery, Depends(list_query(TASK_LIST))]
CaseTaskListQuery = Annotated[ListQuery, Depends(list_query(CASE_TASK_LIST))]
TaskFields = Annotated[Projection | None, Depends(fields_query(TASK_LIST.output_fields))]


@router.get("/tasks", response_model=PageEnvelope[TaskOut])
async def list_tasks(principal: TasksRead, session: SessionDep, query: TaskListQuery) -> JSONResponse:
    """Tasks across every case the caller may see, soonest due first. `assignee_id=me` is the
    caller ("my tasks"; `none`: unassigned), with `status`, `priority`, `case_id`, `deadline_id`,
    `due_from`/`due_to` (dates, inclusive) and `search` over titles."""
    return envelope.listed(
        await service.list_tasks(session, principal, query), query, lambda t: TaskOut.dump_for(t, principal)
    )


@router.get("/cases/{case_id}/tasks", response_model=PageEnvelope[TaskOut])
async def list_case_tasks(
    case_id: str, principal: TasksRead, session: SessionDep, query: CaseTaskListQuery
) -> JSONResponse:
    """A case's tasks, with the same parameters as `GET /tasks` (but `case_id`)."""
    case = await case_for(session, principal, case_id, Level.READ)
    return envelope.listed(
        await service.list_case_tasks(session, principal, case, query),
        query,
        lambda t: TaskOut.dump_for(t, principal),
    )


@router.post("/cases/{case_id}/tasks", response_model=Envelope[TaskOut | IdOnlyOut], status_code=201)
async def create_task(
    case_id: str, body: TaskCreate, principal: TasksWrite, session: SessionDep
) -> JSONResponse:
    """Add a task to a case. Emits `task.created`."""
    case = await case_for(session, principal, case_id, Level.WRITE)
    return envelope.created(
        TaskOut.dump_for(await service.create_task(session, principal, case, body), principal)
    )


@router.get("/tasks/{task_id}", response_model=Envelope[TaskOut])
async def get_task(
    task_id: str, principal: TasksRead, fields: TaskFields, session: SessionDep
) -> JSONResponse:
    task = await service.read_task(session, principal, task_id)
    return envelope.ok(project(TaskOut.dump_for(task, principal), fields))


@router.patch("/tasks/{task_id}", response_model=Envelope[TaskOut | IdOnlyOut])
async def update_task(
    task_id: str, body: TaskUpdate, principal: TasksWrite, session: SessionDep
) -> JSONResponse:
    """Change any subset of the writable fields. Emits `task.updated` with `changes`."""
    task = await service.task_for(session, principal, task_id, Level.WRITE)
    return envelope.ok(TaskOut.dump_for(await service.update_task(session, principal, task, body), principal))


@router.delete("/tasks/{task_id}", response_model=Envelope[DeletedOut])
async def delete_task(task_id: str, principal: TasksWrite, session: SessionDep) -> JSONResponse:
    """Delete a task. Emits `task.deleted`."""
    task = await service.task_for(session, principal, task_id, Level.WRITE)
    await service.delete_task(session, principal, task)
    return envelope.deleted(task.id)
