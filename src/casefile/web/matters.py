"""The matters list (search, filters, sort, cursor paging; the URL holds the query) and the new
matter form, whose conflict check runs before saving (`POST /conflicts/checks`'s service and
redaction: a hit on a matter the user may not see says only that one exists)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.access.dependencies import CasesRead
from casefile.auth.permissions import Permission, Principal
from casefile.cases import service as cases_service
from casefile.cases.repository import CASE_LIST, cases_by_id
from casefile.cases.schemas import PRIORITIES, STATUSES, CaseCreate
from casefile.conflicts import service as conflicts_service
from casefile.conflicts.schemas import MAX_NAMES
from casefile.contacts import service as contacts_service
from casefile.contacts.schemas import ContactCreate, PartyCreate
from casefile.error_handlers import validation_details
from casefile.errors import ErrorDetail, ValidationFailed, permission_missing
from casefile.listing import build_list_query
from casefile.request_scope import RuntimeDep, SessionDep
from casefile.web.errors import refusal_text
from casefile.web.security import Changer
from casefile.web.templating import render, render_fragment, viewer

router = APIRouter(include_in_schema=False)

LIST_PARAMETERS = ("search", "status", "case_type", "priority", "assigned_to", "sort", "order", "cursor")
SORTS = {
    "created_at": "Newest first",
    "updated_at": "Recently changed",
    "title": "Title",
    "case_number": "Case number",
    "priority": "Priority",
    "status": "Status",
}
PAGE_SIZE = "20"
CASE_FIELDS = ("title", "client_name", "case_type", "jurisdiction", "description")
FORM_FIELDS = ("title", "client_name", "adverse", "case_type", "jurisdiction", "priority", "description")


@router.get("/app/matters")
async def matters(request: Request, principal: CasesRead, session: SessionDep) -> HTMLResponse:
    me = await viewer(session, principal)
    asked = {name: request.query_params.get(name, "").strip() for name in LIST_PARAMETERS}
    params = {name: value for name, value in asked.items() if value}
    rows: list[Any] = []
    error, next_url, total = "", "", 0
    try:
        page = await cases_service.list_cases(
            session, principal, build_list_query(CASE_LIST, {**params, "limit": PAGE_SIZE})
        )
    except ValidationFailed as exc:
        await session.rollback()
        error = refusal_text(exc)
    else:
        rows, total = page.rows, page.total
        if page.next_cursor:
            kept = {k: v for k, v in params.items() if k != "cursor"}
            next_url = "/app/matters?" + urlencode({**kept, "cursor": page.next_cursor})
    filtered = any(params.get(name) for name in ("search", "status", "case_type", "priority", "assigned_to"))
    context = {
        "rows": rows,
        "total": total,
        "asked": asked,
        "error": error,
        "next_url": next_url,
        "first_url": "/app/matters?" + urlencode({k: v for k, v in params.items() if k != "cursor"}),
        "paged": bool(params.get("cursor")),
        "filtered": filtered,
        "statuses": STATUSES,
        "priorities": PRIORITIES,
        "sorts": SORTS,
    }
    return render(request, "matters.html", context, me=me, nav="matters")


@router.get("/app/matters/new")
async def new_matter_form(request: Request, principal: CasesRead, session: SessionDep) -> HTMLResponse:
    if not principal.can(Permission.WRITE_CASES):
        raise permission_missing(Permission.WRITE_CASES)
    me = await viewer(session, principal)
    form = dict.fromkeys(FORM_FIELDS, "") | {"priority": "medium"}
    context = {"form": form, "errors": {}, "check": None, "priorities": PRIORITIES}
    return render(request, "new_matter.html", context, me=me, nav="new-matter")


def _lines(text: str) -> list[str]:
    return list(dict.fromkeys(line.strip()[:300] for line in text.splitlines() if line.strip()))[:MAX_NAMES]


def _names(form: dict[str, str]) -> list[str]:
    """The names to check: the client's and each adverse party's."""
    return _lines("\n".join([form["client_name"], form["adverse"]]))


async def conflict_check(session: AsyncSession, principal: Principal, names: list[str]) -> dict[str, Any]:
    """The check as the API runs and shows it (recorded, `conflict_check.completed`, redacted)."""
    if not principal.can(Permission.READ_CONFLICTS):
        return {"allowed": False, "names": names, "hits": []}
    if not names:
        return {"allowed": True, "names": [], "hits": []}
    check = await conflicts_service.create_check(session, principal, names, None)
    hits = (await conflicts_service.dump_for(session, principal, check))["hits"]
    await name_matters(session, hits)
    return {"allowed": True, "names": names, "hits": hits}


async def name_matters(session: AsyncSession, hits: list[dict[str, Any]]) -> None:
    """Each hit's `title`: its matter's, for a matter the user may see (a hidden matter's hit is
    redacted by the conflicts service and gets none)."""
    matters = await cases_by_id(session, {h["case_id"] for h in hits if h["visible"] and h["case_id"]})
    for hit in hits:
        case = matters.get(hit["case_id"]) if hit["visible"] else None
        hit["title"] = case.title if case else None


@router.post("/app/matters/new")
async def new_matter(
    request: Request, principal: Changer, session: SessionDep, runtime: RuntimeDep
) -> Response:
    if not principal.can(Permission.WRITE_CASES):
        raise permission_missing(Permission.WRITE_CASES)
    raw = await request.form()
    form = {name: str(raw.get(name) or "") for name in FORM_FIELDS}
    names = _names(form)
    if raw.get("action") != "create":
        check = await conflict_check(session, principal, names)
        if request.headers.get("hx-request"):
            return render_fragment("conflict_hits.html", {"check": check})
        me = await viewer(session, principal)
        context: dict[str, Any] = {"form": form, "errors": {}, "check": check, "priorities": PRIORITIES}
        return render(request, "new_matter.html", context, me=me, nav="new-matter")
    try:
        fields = {name: form[name].strip() or None for name in CASE_FIELDS}
        body = CaseCreate.model_validate(fields | {"priority": form["priority"] or "medium"})
        case = await cases_service.create_case(
            session, principal, body, default_access=runtime.settings.default_case_access
        )
        if principal.can(Permission.WRITE_CONTACTS):
            for name in _lines(form["adverse"]):
                contact = await contacts_service.create_contact(session, principal, ContactCreate(name=name))
                await contacts_service.add_party(
                    session, principal, case, PartyCreate(contact_id=contact.id, role="adverse_party")
                )
    except (ValidationFailed, ValidationError) as exc:
        await session.rollback()
        details = validation_details(exc.errors()) if isinstance(exc, ValidationError) else exc.details
        errors = {d.field: d.message for d in details or [ErrorDetail("title", str(exc))]}
        me = await viewer(session, principal)
        page = {"form": form, "errors": errors, "check": None, "priorities": PRIORITIES}
        return render(request, "new_matter.html", page, me=me, nav="new-matter", status_code=422)
    return RedirectResponse(f"/app/matters/{case.id}", status_code=303)
