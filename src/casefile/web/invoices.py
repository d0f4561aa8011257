"""Invoices: the list (over the matters the user may see), an invoice with its lines, totals and
payments, the moves its state allows (approve, send, void) as buttons, a payment, the PDF and
LEDES downloads (the API's own handlers), and the accounts-receivable aging report, through the
services of `/invoices` and `/billing/reports/aging`."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.access.matter import Level, case_for
from casefile.audit import service as audit
from casefile.auth.permissions import Permission, Principal
from casefile.billing import invoice_router, invoice_service
from casefile.billing.dependencies import BillingRead, query_currency, query_day, visible_cases
from casefile.billing.invoice_schemas import InvoiceOut, PaymentCreate, PaymentOut
from casefile.billing.repository import INVOICE_LIST, open_invoices
from casefile.cases.repository import cases_by_id
from casefile.clock import utcnow
from casefile.errors import NotFound, ValidationFailed
from casefile.listing import build_list_query, fetch_page
from casefile.models import Invoice
from casefile.request_scope import RuntimeDep, SessionDep
from casefile.web.billing_forms import Refused, attempt, optional, reading, require, text
from casefile.web.errors import refusal_text
from casefile.web.matter import people
from casefile.web.security import Changer
from casefile.web.templating import render, viewer

router = APIRouter(include_in_schema=False)

STATES = ("draft", "approved", "sent", "paid", "void")
# Each move with the permission it needs (the API's: approving and voiding are a manager's).
MOVES = {
    "approve": Permission.APPROVE_BILLING,
    "send": Permission.WRITE_BILLING,
    "void": Permission.APPROVE_BILLING,
}
METHODS = ("bank", "card", "cash", "check")


@router.get("/app/invoices")
async def invoices(request: Request, principal: BillingRead, session: SessionDep) -> HTMLResponse:
    me = await viewer(session, principal)
    params = {name: request.query_params.get(name, "").strip() for name in ("state", "cursor")}
    params = {name: value for name, value in params.items() if value}
    rows: list[Any] = []
    error, next_url = "", ""
    try:
        page = await fetch_page(
            session,
            INVOICE_LIST,
            build_list_query(INVOICE_LIST, {**params, "limit": "50", "order": "desc"}),
            conditions=[Invoice.case_id.in_(visible_cases(principal))],
        )
    except ValidationFailed as exc:
        await session.rollback()
        error = refusal_text(exc)
    else:
        rows = page.rows
        if page.next_cursor:
            next_url = "/app/invoices?" + urlencode({**params, "cursor": page.next_cursor})
    matters = await cases_by_id(session, {row.case_id for row in rows})
    context = {
        "invoices": [InvoiceOut.dump(row) for row in rows],
        "matters": matters,
        "states": STATES,
        "state": params.get("state", ""),
        "error": error,
        "next_url": next_url,
    }
    return render(request, "invoices.html", context, me=me, nav="invoices", status_code=422 if error else 200)


@router.get("/app/invoices/aging")
async def aging(
    request: Request, principal: BillingRead, session: SessionDep, runtime: RuntimeDep
) -> HTMLResponse:
    """Accounts receivable by age, as `GET /billing/reports/aging`."""
    me = await viewer(session, principal)
    asked_day = request.query_params.get("as_of", "").strip()
    asked_currency = request.query_params.get("currency", "").strip().upper()
    day = query_day(asked_day, "as_of") if asked_day else utcnow().date()
    currency = query_currency(asked_currency) if asked_currency else runtime.settings.billing_currency
    report = invoice_service.aging(await open_invoices(session, day, visible_cases(principal)), day, currency)
    rows: list[Any] = report["invoices"]  # type: ignore[assignment]
    matters = await cases_by_id(session, {row["case_id"] for row in rows})
    context = {"report": report, "matters": matters}
    return render(request, "aging.html", context, me=me, nav="invoices")


async def invoice_page(
    request: Request,
    session: AsyncSession,
    principal: Principal,
    invoice: Invoice,
    *,
    error: str = "",
    status_code: int = 200,
) -> HTMLResponse:
    case = await case_for(session, principal, invoice.case_id)
    await audit.record_read(
        session, "invoice.read", resource_type="invoice", resource_id=invoice.id, case_id=invoice.case_id
    )
    shown = InvoiceOut.dump(invoice, await invoice_service.lines_of(session, invoice))
    payments = [PaymentOut.dump(p) for p in await invoice_service.payments_of(session, invoice)]
    me = await viewer(session, principal)
    moves = [
        action
        for action, (sources, _) in invoice_service.MOVES.items()
        if invoice.state in sources
        and principal.can(MOVES[action])
        and not (action == "void" and invoice.paid_minor)
    ]
    context = {
        "invoice": shown,
        "case": case,
        "payments": payments,
        "moves": moves,
        "can_pay": invoice.state in ("approved", "sent") and principal.can(Permission.WRITE_BILLING),
        "can_transfer": invoice.state in ("approved", "sent") and principal.can(Permission.WRITE_TRUST),
        "methods": METHODS,
        "people": await people(session, principal),
        "error": error,
        "today": utcnow().date(),
    }
    return render(request, "invoice.html", context, me=me, nav="invoices", status_code=status_code)


async def refused_page(
    request: Request, principal: Principal, invoice_id: str, refused: Refused
) -> HTMLResponse:
    """The invoice as its GET shows it (read anew: the form's transaction was rolled back), with
    the refusal."""
    async with reading(request) as reader:
        found = await invoice_service.invoice_for(reader, principal, invoice_id, Level.READ)
        return await invoice_page(
            request, reader, principal, found, error=refused.message, status_code=refused.status_code
        )


@router.get("/app/invoices/{invoice_id}")
async def invoice(
    invoice_id: str, request: Request, principal: BillingRead, session: SessionDep
) -> HTMLResponse:
    found = await invoice_service.invoice_for(session, principal, invoice_id, Level.READ)
    return await invoice_page(request, session, principal, found)


@router.post("/app/invoices/{invoice_id}/payments")
async def pay(invoice_id: str, request: Request, principal: Changer, session: SessionDep) -> Response:
    """A payment of part or all of the balance, as `POST /invoices/{id}/payments`."""
    require(principal, Permission.WRITE_BILLING)
    found = await invoice_service.invoice_for(session, principal, invoice_id, Level.WRITE)
    form = await request.form()

    async def record() -> Any:
        body = PaymentCreate.model_validate(
            {
                "amount": text(form, "amount"),
                "date": optional(form, "date"),
                "method": text(form, "method") or "bank",
                "reference": text(form, "reference"),
            }
        )
        return await invoice_service.record_payment(session, principal, found, body)

    payment = await attempt(session, record)
    if isinstance(payment, Refused):
        return await refused_page(request, principal, invoice_id, payment)
    return RedirectResponse(f"/app/invoices/{found.id}", status_code=303)


@router.post("/app/invoices/{invoice_id}/{action}")
async def move(
    *,
    invoice_id: str,
    action: str,
    request: Request,
    principal: Changer,
    session: SessionDep,
    runtime: RuntimeDep,
) -> Response:
    """Approve, send or void, as `POST /invoices/{id}/{action}` (a move the state does not allow
    is refused with the API's 409, shown on the invoice)."""
    if action not in MOVES:
        raise NotFound("Not found")
    require(principal, MOVES[action])
    found = await invoice_service.invoice_for(session, principal, invoice_id, Level.WRITE)

    async def change() -> Any:
        return await invoice_service.move(session, runtime.settings, principal, found, action)

    moved = await attempt(session, change)
    if isinstance(moved, Refused):
        return await refused_page(request, principal, invoice_id, moved)
    return RedirectResponse(f"/app/invoices/{found.id}", status_code=303)


@router.get("/app/invoices/{invoice_id}/pdf")
async def pdf(invoice_id: str, principal: BillingRead, session: SessionDep, runtime: RuntimeDep) -> Response:
    """Exactly `GET /invoices/{id}/pdf` (its checks, audit entry and headers)."""
    return await invoice_router.invoice_pdf(invoice_id, principal, session, runtime)


@router.get("/app/invoices/{invoice_id}/ledes")
async def ledes(
    invoice_id: str, principal: BillingRead, session: SessionDep, runtime: RuntimeDep
) -> Response:
    """Exactly `GET /invoices/{id}/ledes`."""
    return await invoice_router.invoice_ledes(invoice_id, principal, session, runtime)
