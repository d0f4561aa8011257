"""Refused requests in the audit trail: the exception handlers `create_app` installs for
"the caller may not see this case" (answered 404 as if it did not exist) and for 403s on a case's
paths. Each writes a `denied` entry in a transaction of its own (the request's own has rolled
back by the time its error is answered), then answers exactly as the error path would have.

The action is the one the request would have been recorded under had it succeeded: named per
route below, or else derived from the path and method: the last collection the path names
(`cases`, `documents`, `notes`, `tasks`, `parties`, `deadlines`, `holds`, `jobs`) and `read` (an
item) or `list` (the collection) for a read, `create` for a POST to a collection, `delete` for a
DELETE, `update` otherwise (`GET /cases/{id}` → `case.read`, `GET /cases/{id}/tasks` →
`task.list`, `PATCH /tasks/{id}` → `task.update`, `POST /cases/{id}/assignees` → `case.update`).
The case is the path's, or the one the refusal names (a task, note or job path names no case).
"""

from __future__ import annotations

import re

from fastapi import Request
from fastapi.responses import JSONResponse

from casefile.audit.service import record_apart
from casefile.error_handlers import app_error_response, auth_error_response
from casefile.errors import AppError, AuthError
from casefile.metrics import route_template
from casefile.runtime import Runtime

_VERSION_PREFIX = re.compile(r"^/api(?:/v\d+)?")
_ROUTE_ACTIONS = {
    ("POST", "/cases/{case_id}/documents"): "document.uploaded",
    ("GET", "/cases/{case_id}/audit"): "audit.read",
    ("GET", "/cases/{case_id}/access"): "access.read",
    ("PUT", "/cases/{case_id}/access"): "access.update",
    ("POST", "/cases/{case_id}/ask"): "case.ask",
    ("POST", "/cases/{case_id}/summarize"): "case.summarize",
    ("GET", "/documents/{document_id}/content"): "document.download",
    ("HEAD", "/documents/{document_id}/content"): "document.download",
    ("POST", "/documents/{document_id}/versions"): "document.updated",
    ("GET", "/documents/{document_id}/versions/{number}/content"): "document.download",
    ("HEAD", "/documents/{document_id}/versions/{number}/content"): "document.download",
    ("GET", "/notes/{note_id}/history"): "note.history",
    ("POST", "/holds/{hold_id}/release"): "hold.release",
    # Administration views of a matter the administrator is walled off from (decision 0022).
    ("GET", "/admin/deliveries/{delivery_id}"): "delivery.read",
    ("POST", "/admin/deliveries/{delivery_id}/retry"): "delivery.retry",
    ("POST", "/admin/trash/{item_id}/restore"): "trash.restore",
    ("DELETE", "/admin/trash/{item_id}"): "trash.purge",
    ("GET", "/audit/entries/{entry_id}/inclusion-proof"): "audit.proof",
}
_RESOURCES = {
    "cases": "case",
    "documents": "document",
    "notes": "note",
    "tasks": "task",
    "parties": "party",
    "deadlines": "deadline",
    "holds": "hold",
    "jobs": "job",
}


def action_for(request: Request) -> str:
    # The route's template with the prefixes of the routers it is in (`/api/v1/admin/trash/…`).
    path = _VERSION_PREFIX.sub("", route_template(request.scope))
    named = _ROUTE_ACTIONS.get((request.method, path))
    if named is not None:
        return named
    collection, item = "cases", False
    for part in path.split("/"):
        if part in _RESOURCES:
            collection, item = part, False
        elif part.startswith("{"):
            item = True
    if request.method in ("GET", "HEAD"):
        verb = "read" if item else "list"
    elif request.method == "DELETE":
        verb = "delete"
    else:
        verb = "create" if request.method == "POST" and not item else "update"
    return f"{_RESOURCES[collection]}.{verb}"


async def record_denied(request: Request, case_id: str | None, reason: str) -> None:
    runtime: Runtime = request.app.state.runtime
    await record_apart(
        runtime.db,
        action_for(request),
        resource_type="case",
        resource_id=case_id,
        case_id=case_id,
        outcome="denied",
        details={"method": request.method, "path": request.url.path, "reason": reason},
    )


async def on_case_not_visible(request: Request, exc: Exception) -> JSONResponse:
    """For `cases.access.CaseNotVisible` (which carries `case_id`): 404, and a denied entry."""
    assert isinstance(exc, AppError)
    await record_denied(request, getattr(exc, "case_id", None), "not visible to the caller")
    return app_error_response(exc)


async def on_forbidden(request: Request, exc: Exception) -> JSONResponse:
    """For 403s: on a case's path, or refusing a right on a case, a denied entry; the answer is
    the usual authentication body."""
    assert isinstance(exc, AuthError)
    case_id = request.path_params.get("case_id") or getattr(exc, "case_id", None)
    if case_id is not None:
        await record_denied(request, case_id, exc.error_code)
    return auth_error_response(exc)
