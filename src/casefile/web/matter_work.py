"""The matter page's tasks (add, assign, complete) and documents (upload, list, download) tabs,
through the services of `/cases/{id}/tasks`, `/tasks/{id}` and `/cases/{id}/documents`."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError

from casefile.access.dependencies import CaseInPath, CasesRead, DocumentInPath, DocumentsRead
from casefile.access.matter import Level, case_for
from casefile.auth.browser import csrf_token
from casefile.auth.permissions import Permission
from casefile.documents import router as documents_api
from casefile.documents import service as documents_service
from casefile.documents.repository import DOCUMENT_LIST
from casefile.error_handlers import validation_details
from casefile.errors import ValidationFailed, permission_missing
from casefile.listing import build_list_query
from casefile.request_scope import RuntimeDep, SessionDep
from casefile.routing import streams_its_body
from casefile.tasks import service as tasks_service
from casefile.tasks.repository import CASE_TASK_LIST
from casefile.tasks.schemas import TaskCreate, TaskUpdate
from casefile.web.matter import matter_page, people
from casefile.web.security import Changer
from casefile.web.signin import safe_next
from casefile.web.templating import viewer

router = APIRouter(include_in_schema=False)


@router.get("/app/matters/{case_id}/tasks")
async def tasks(
    request: Request, principal: CasesRead, case: CaseInPath, session: SessionDep
) -> HTMLResponse:
    query = build_list_query(CASE_TASK_LIST, {"sort": "due_at", "order": "asc", "limit": "100"})
    page = await tasks_service.list_case_tasks(session, principal, case, query)
    me = await viewer(session, principal)
    context = {"tasks": page.rows, "people": await people(session, principal)}
    return await matter_page(request, session, me, case, tab="tasks", context=context)


def _assignee(value: str, user_id: str | None) -> str | None:
    return user_id if value == "me" else (value or None)


@router.post("/app/matters/{case_id}/tasks")
async def add_task(request: Request, case_id: str, principal: Changer, session: SessionDep) -> Response:
    if not principal.can(Permission.WRITE_CASES):
        raise permission_missing(Permission.WRITE_CASES)
    case = await case_for(session, principal, case_id, Level.WRITE)
    form = await request.form()
    values = {
        "title": str(form.get("title") or "").strip(),
        "assignee_id": _assignee(str(form.get("assignee_id") or ""), principal.user_id),
        "due_at": str(form.get("due_at") or "") or None,
        "priority": str(form.get("priority") or "medium"),
    }
    try:
        await tasks_service.create_task(session, principal, case, TaskCreate.model_validate(values))
    except ValidationError as exc:
        raise ValidationFailed(details=validation_details(exc.errors())) from None
    return RedirectResponse(f"/app/matters/{case_id}/tasks", status_code=303)


@router.post("/app/tasks/{task_id}")
async def change_task(request: Request, task_id: str, principal: Changer, session: SessionDep) -> Response:
    """Complete (`status=done`) or reassign (`assignee_id`) a task, as `PATCH /tasks/{id}`."""
    if not principal.can(Permission.WRITE_CASES):
        raise permission_missing(Permission.WRITE_CASES)
    task = await tasks_service.task_for(session, principal, task_id, Level.WRITE)
    form = await request.form()
    values: dict[str, str | None] = {}
    if "status" in form:
        values["status"] = str(form.get("status"))
    if "assignee_id" in form:
        values["assignee_id"] = _assignee(str(form.get("assignee_id")), principal.user_id)
    try:
        await tasks_service.update_task(session, principal, task, TaskUpdate.model_validate(values))
    except ValidationError as exc:
        raise ValidationFailed(details=validation_details(exc.errors())) from None
    back = safe_next(str(form.get("next") or f"/app/matters/{task.case_id}/tasks"))
    return RedirectResponse(back, status_code=303)


@router.get("/app/matters/{case_id}/documents")
async def documents(
    request: Request, principal: CasesRead, case: CaseInPath, session: SessionDep, runtime: RuntimeDep
) -> HTMLResponse:
    if not principal.can(Permission.READ_DOCUMENTS):
        raise permission_missing(Permission.READ_DOCUMENTS)
    page = await documents_service.list_documents(
        session, case, build_list_query(DOCUMENT_LIST, {"limit": "100"})
    )
    me = await viewer(session, principal)
    # The upload streams its multipart body into the store (documents.service.upload_document)
    # without reading form fields first: its CSRF token rides in the form's URL.
    token = csrf_token(runtime, principal.session_id) if principal.session_id else ""
    context = {
        "documents": page.rows,
        "people": await people(session, principal),
        "upload_url": f"/app/matters/{case.id}/documents?csrf_token={token}",
        "can_upload": principal.can(Permission.WRITE_DOCUMENTS),
        # While a document is queued or being processed the list refreshes itself (htmx).
        "processing": any(d.processing_status in ("pending", "processing") for d in page.rows),
    }
    return await matter_page(request, session, me, case, tab="documents", context=context)


@router.post("/app/matters/{case_id}/documents")
@streams_its_body
async def upload(
    request: Request, case_id: str, principal: Changer, session: SessionDep, runtime: RuntimeDep
) -> Response:
    if not principal.can(Permission.WRITE_DOCUMENTS):
        raise permission_missing(Permission.WRITE_DOCUMENTS)
    case = await case_for(session, principal, case_id, Level.WRITE)
    await documents_service.upload_document(
        session,
        runtime,
        principal,
        case,
        body=request.stream(),
        content_type=request.headers.get("content-type", ""),
    )
    return RedirectResponse(f"/app/matters/{case_id}/documents", status_code=303)


@router.get("/app/documents/{document_id}/download")
async def download(
    request: Request,
    principal: DocumentsRead,
    document: DocumentInPath,
    session: SessionDep,
    runtime: RuntimeDep,
) -> Response:
    """Exactly `GET /documents/{id}/content` (its checks, headers and audit entry)."""
    return await documents_api.download_document(request, principal, document, session, runtime)
