"""The matter's time tab: its time entries and expenses, quick entry from one line ("1h20
drafted answer to motion"), the day's suggestions accepted into drafts, an expense, and a draft
invoice from the unbilled entries of a period, through the services of `/cases/{id}/time-entries`,
`/time-entries/suggestions`, `/cases/{id}/expenses` and `POST /cases/{id}/invoices`."""

from __future__ import annotations

from datetime import date
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.access.dependencies import CaseInPath
from casefile.access.matter import Level, case_for, level_on
from casefile.auth.permissions import Permission, Principal
from casefile.billing import invoice_service, suggestions, time_service
from casefile.billing.dependencies import BillingRead, query_day
from casefile.billing.invoice_schemas import InvoiceCreate, InvoiceOut
from casefile.billing.repository import EXPENSE_LIST, INVOICE_LIST, TIME_LIST
from casefile.billing.schemas import ExpenseCreate, ExpenseOut, TimeEntryCreate, TimeEntryOut
from casefile.clock import utcnow
from casefile.listing import build_list_query, fetch_page
from casefile.models import Case, Invoice
from casefile.request_scope import RuntimeDep, SessionDep, runtime_of
from casefile.settings import Settings
from casefile.web.billing_forms import Refused, attempt, optional, reading, require, text
from casefile.web.matter import matter_page, people
from casefile.web.security import Changer
from casefile.web.templating import viewer

router = APIRouter(include_in_schema=False)
LIMIT = "100"


async def time_page(
    request: Request,
    session: AsyncSession,
    settings: Settings,
    principal: Principal,
    case: Case,
    *,
    day: date | None = None,
    refused: Refused | None = None,
    failed: str = "",
    values: dict[str, str] | None = None,
) -> HTMLResponse:
    """The tab; after a refused form, the API's refusal is shown above the form `failed` names,
    which keeps what was typed (`values`)."""
    query = build_list_query(TIME_LIST, {"limit": LIMIT, "sort": "date", "order": "desc"})
    entries = await time_service.list_entries(session, query, case=case, visible=None)
    expenses = await time_service.list_expenses(
        session, case, build_list_query(EXPENSE_LIST, {"limit": LIMIT, "sort": "date", "order": "desc"})
    )
    invoices = await fetch_page(
        session,
        INVOICE_LIST,
        build_list_query(INVOICE_LIST, {"limit": LIMIT, "order": "desc"}),
        conditions=[Invoice.case_id == case.id],
    )
    me = await viewer(session, principal)
    can_record = (
        principal.can(Permission.WRITE_BILLING) and await level_on(session, principal, case) >= Level.WRITE
    )
    day = day or utcnow().date()
    suggested: list[dict[str, Any]] = []
    if can_record:
        found = await suggestions.suggest(session, settings, principal, day)
        suggested = [s for s in found if s["case_id"] == case.id]
    context = {
        "entries": [TimeEntryOut.dump(e) for e in entries.rows],
        "expenses": [ExpenseOut.dump(x) for x in expenses.rows],
        "invoices": [InvoiceOut.dump(i) for i in invoices.rows],
        "suggestions": suggested,
        "day": day,
        "can_record": can_record,
        "people": await people(session, principal),
        "error": refused.message if refused else "",
        "failed": failed,
        "values": values or {},
        "recorded": request.query_params.get("recorded", ""),
    }
    status_code = refused.status_code if refused else 200
    return await matter_page(request, session, me, case, tab="time", context=context, status_code=status_code)


async def refused_page(
    request: Request,
    principal: Principal,
    case_id: str,
    refused: Refused,
    *,
    failed: str,
    values: dict[str, str],
) -> HTMLResponse:
    """The tab as its GET shows it (read anew: the form's transaction was rolled back), with the
    refusal above the form that was refused."""
    async with reading(request) as reader:
        case = await case_for(reader, principal, case_id)
        settings = runtime_of(request).settings
        return await time_page(
            request, reader, settings, principal, case, refused=refused, failed=failed, values=values
        )


@router.get("/app/matters/{case_id}/time")
async def time_tab(
    request: Request, principal: BillingRead, case: CaseInPath, session: SessionDep, runtime: RuntimeDep
) -> HTMLResponse:
    asked = request.query_params.get("day", "")
    day = query_day(asked, "day") if asked else None
    return await time_page(request, session, runtime.settings, principal, case, day=day)


@router.post("/app/matters/{case_id}/time")
async def record_time(
    request: Request, case_id: str, principal: Changer, session: SessionDep, runtime: RuntimeDep
) -> Response:
    """Quick entry (`text`: "0.3 call with client"), or a suggestion accepted (`seconds` and
    `description`): a draft time entry on the matter, as `POST /cases/{id}/time-entries`."""
    require(principal, Permission.WRITE_BILLING)
    case = await case_for(session, principal, case_id, Level.WRITE)
    form = await request.form()
    values = {name: text(form, name) for name in ("text", "date", "seconds", "description")}
    body: dict[str, Any]
    if values["seconds"]:
        seconds = values["seconds"]  # the API's body takes a number (a form's fields are text)
        body = {
            "seconds": int(seconds) if seconds.isdigit() else seconds,
            "description": values["description"],
        }
    else:
        body = {"text": values["text"], "billable": form.get("billable") == "on"}
    body["date"] = values["date"] or None

    async def create() -> Any:
        return await time_service.create_entry(
            session, runtime.settings, principal, case, TimeEntryCreate.model_validate(body)
        )

    entry = await attempt(session, create)
    if isinstance(entry, Refused):
        return await refused_page(request, principal, case_id, entry, failed="time", values=values)
    return RedirectResponse(f"/app/matters/{case.id}/time?recorded={entry.id}", status_code=303)


@router.post("/app/matters/{case_id}/expenses")
async def record_expense(
    request: Request, case_id: str, principal: Changer, session: SessionDep, runtime: RuntimeDep
) -> Response:
    require(principal, Permission.WRITE_BILLING)
    case = await case_for(session, principal, case_id, Level.WRITE)
    form = await request.form()
    values = {name: text(form, name) for name in ("amount", "category", "description", "date")}

    async def create() -> Any:
        body = ExpenseCreate.model_validate(
            {**values, "date": values["date"] or None, "billable": form.get("billable") == "on"}
        )
        return await time_service.create_expense(session, runtime.settings, principal, case, body)

    expense = await attempt(session, create)
    if isinstance(expense, Refused):
        return await refused_page(request, principal, case_id, expense, failed="expense", values=values)
    return RedirectResponse(f"/app/matters/{case.id}/time?recorded={expense.id}", status_code=303)


@router.post("/app/matters/{case_id}/invoices")
async def draft_invoice(
    request: Request, case_id: str, principal: Changer, session: SessionDep, runtime: RuntimeDep
) -> Response:
    """A draft invoice from the matter's unbilled entries and expenses of a period."""
    require(principal, Permission.WRITE_BILLING)
    case = await case_for(session, principal, case_id, Level.WRITE)
    form = await request.form()
    values = {name: text(form, name) for name in ("start", "end", "discount_percent")}

    async def draft() -> Any:
        body = InvoiceCreate.model_validate(
            {
                "start": values["start"],
                "end": values["end"],
                "discount_percent": values["discount_percent"] or "0",
                "tax_percent": optional(form, "tax_percent"),
            }
        )
        invoice, _ = await invoice_service.draft(session, runtime.settings, principal, case, body)
        return invoice

    invoice = await attempt(session, draft)
    if isinstance(invoice, Refused):
        return await refused_page(request, principal, case_id, invoice, failed="invoice", values=values)
    return RedirectResponse(f"/app/invoices/{invoice.id}", status_code=303)
