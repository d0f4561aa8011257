"""The matter's parties tab: its parties with their roles, the conflict check an adverse party
ran (as `GET /conflicts/checks/{id}` shows it: hits on matters the user may not see redacted),
and adding a party by name (a new contact, then `POST /cases/{id}/parties`'s service)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError

from casefile.access.dependencies import CaseInPath, CasesRead
from casefile.access.matter import Level, case_for
from casefile.auth.permissions import Permission
from casefile.conflicts import service as conflicts_service
from casefile.contacts import service as contacts_service
from casefile.contacts.repository import PARTY_LIST
from casefile.contacts.schemas import ROLES, ContactCreate, PartyCreate
from casefile.error_handlers import validation_details
from casefile.errors import ValidationFailed, permission_missing
from casefile.listing import build_list_query
from casefile.request_scope import SessionDep
from casefile.web.matter import matter_page
from casefile.web.matters import name_matters
from casefile.web.security import Changer
from casefile.web.templating import viewer

router = APIRouter(include_in_schema=False)


@router.get("/app/matters/{case_id}/parties")
async def parties(
    request: Request, principal: CasesRead, case: CaseInPath, session: SessionDep
) -> HTMLResponse:
    page = await contacts_service.list_parties(session, case, build_list_query(PARTY_LIST, {"limit": "100"}))
    checks: dict[str, dict[str, Any]] = {}
    if principal.can(Permission.READ_CONFLICTS):
        for party in page.rows:
            if party.conflict_check_id:
                check = await conflicts_service.get_check(session, principal, party.conflict_check_id)
                checks[party.id] = await conflicts_service.dump_for(session, principal, check)
        await name_matters(session, [hit for shown in checks.values() for hit in shown["hits"]])
    me = await viewer(session, principal)
    context = {
        "parties": page.rows,
        "checks": checks,
        "roles": ROLES,
        "can_add": principal.can(Permission.WRITE_CONTACTS),
    }
    return await matter_page(request, session, me, case, tab="parties", context=context)


@router.post("/app/matters/{case_id}/parties")
async def add_party(request: Request, case_id: str, principal: Changer, session: SessionDep) -> Response:
    for needed in (Permission.WRITE_CASES, Permission.WRITE_CONTACTS):
        if not principal.can(needed):
            raise permission_missing(needed)
    case = await case_for(session, principal, case_id, Level.WRITE)
    form = await request.form()
    try:
        contact_body = ContactCreate(name=str(form.get("name") or "").strip() or None)
        role = str(form.get("role") or "")
        contact = await contacts_service.create_contact(session, principal, contact_body)
        body = PartyCreate.model_validate({"contact_id": contact.id, "role": role})
    except ValidationError as exc:
        raise ValidationFailed(details=validation_details(exc.errors())) from None
    await contacts_service.add_party(session, principal, case, body)
    return RedirectResponse(f"/app/matters/{case.id}/parties", status_code=303)
