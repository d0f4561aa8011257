"""Client money: a matter's trust ledger and balance (deposit, payment out, transfer for an
approved invoice), a client's ledger across their matters, and the month's three-way
reconciliation, through the services of `/cases/{id}/trust`, `/trust/entries` and
`/trust/reconciliation`. A refusal (an overdraft above all) is the API's 409, shown on the tab."""

from __future__ import annotations

import re
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.access.dependencies import CaseInPath
from casefile.access.matter import Level, case_for, level_on
from casefile.auth.dependencies import Require
from casefile.auth.permissions import Permission, Principal
from casefile.billing import invoice_service
from casefile.billing.invoice_schemas import InvoiceOut, PaymentCreate
from casefile.billing.repository import INVOICE_LIST
from casefile.cases.repository import cases_by_id
from casefile.errors import NotFound, ValidationFailed, admin_required
from casefile.listing import build_list_query, fetch_page
from casefile.models import Case, Contact, Invoice
from casefile.money import text as money_text
from casefile.request_scope import RuntimeDep, SessionDep
from casefile.settings import Settings
from casefile.trust import service as trust
from casefile.trust.repository import TRUST_LIST
from casefile.trust.schemas import TrustEntryOut, TrustMovement, TrustTransfer
from casefile.web.billing_forms import Refused, attempt, reading, require, text
from casefile.web.errors import refusal_text
from casefile.web.matter import matter_page
from casefile.web.security import Changer
from casefile.web.templating import render, viewer

router = APIRouter(include_in_schema=False)
TrustRead = Annotated[Principal, Depends(Require(Permission.READ_TRUST))]
MONTH = re.compile(r"^\d{4}-\d{2}$")
BANK_BALANCE = re.compile(r"^-?\d{1,13}(\.\d{1,4})?$")
KINDS = {"deposits": "deposit", "withdrawals": "withdrawal", "transfers": "transfer"}


async def trust_page(
    request: Request,
    session: AsyncSession,
    principal: Principal,
    case: Case,
    *,
    error: str = "",
    failed: str = "",
    values: dict[str, str] | None = None,
    status_code: int = 200,
) -> HTMLResponse:
    page, balances = await trust.ledger(
        session, case, build_list_query(TRUST_LIST, {"limit": "100", "order": "desc"})
    )
    payable: list[dict[str, Any]] = []
    can_move = (
        principal.can(Permission.WRITE_TRUST) and await level_on(session, principal, case) >= Level.WRITE
    )
    if can_move:
        open_ones = await fetch_page(
            session,
            INVOICE_LIST,
            build_list_query(INVOICE_LIST, {"limit": "100", "state": "approved,sent"}),
            conditions=[Invoice.case_id == case.id],
        )
        payable = [InvoiceOut.dump(i) for i in open_ones.rows]
    me = await viewer(session, principal)
    context = {
        "entries": [TrustEntryOut.dump(e) for e in page.rows],
        "balances": [(b.currency, money_text(b.balance_minor, b.currency)) for b in balances],
        "payable": payable,
        "can_move": can_move,
        "error": error,
        "failed": failed,
        "values": values or {},
    }
    return await matter_page(
        request, session, me, case, tab="trust", context=context, status_code=status_code
    )


@router.get("/app/matters/{case_id}/trust")
async def trust_tab(
    request: Request, principal: TrustRead, case: CaseInPath, session: SessionDep
) -> HTMLResponse:
    return await trust_page(request, session, principal, case)


async def _move(
    session: AsyncSession,
    *,
    settings: Settings,
    principal: Principal,
    case: Case,
    kind: str,
    values: dict[str, str],
) -> Any:
    if kind == "transfer":
        body = TrustTransfer.model_validate(
            {name: values.get(name, "") for name in ("invoice_id", "amount", "reference")}
        )
        invoice = await invoice_service.invoice_for(session, principal, body.invoice_id, Level.WRITE)
        if invoice.case_id != case.id:
            raise NotFound("Invoice not found")
        entry = await trust.transfer_for_invoice(
            session, principal, case, invoice=invoice, amount=body.amount, reference=body.reference
        )
        payment = PaymentCreate(amount=body.amount, reference=body.reference)
        await invoice_service.record_payment(session, principal, invoice, payment, trust_entry_id=entry.id)
        return entry
    movement = TrustMovement.model_validate(
        {name: values.get(name, "") for name in ("amount", "reference", "description")}
    )
    if kind == "deposit":
        return await trust.deposit(session, settings, principal, case, movement)
    return await trust.withdraw(session, settings, principal, case, movement)


@router.post("/app/matters/{case_id}/trust/{what}")
async def move_money(
    *, request: Request, case_id: str, what: str, principal: Changer, session: SessionDep, runtime: RuntimeDep
) -> Response:
    """A deposit, a payment out, or a transfer to operating for an approved invoice, as `POST
    /cases/{id}/trust/deposits|withdrawals|transfers`."""
    kind = KINDS.get(what)
    if kind is None:
        raise NotFound("Not found")
    require(principal, Permission.WRITE_TRUST)
    case = await case_for(session, principal, case_id, Level.WRITE)
    form = await request.form()
    values = {name: text(form, name) for name in ("amount", "reference", "description", "invoice_id")}
    entry = await attempt(
        session,
        lambda: _move(
            session, settings=runtime.settings, principal=principal, case=case, kind=kind, values=values
        ),
    )
    if isinstance(entry, Refused):
        # The tab as its GET shows it, read anew (the form's transaction was rolled back).
        async with reading(request) as reader:
            case = await case_for(reader, principal, case_id)
            return await trust_page(
                request,
                reader,
                principal,
                case,
                error=entry.message,
                failed=kind,
                values=values,
                status_code=entry.status_code,
            )
    return RedirectResponse(f"/app/matters/{case.id}/trust", status_code=303)


@router.get("/app/trust")
async def ledger(request: Request, principal: TrustRead, session: SessionDep) -> HTMLResponse:
    """Trust entries of every matter the user may see; `contact_id` gives one client's ledger."""
    me = await viewer(session, principal)
    params = {name: request.query_params.get(name, "").strip() for name in ("contact_id", "kind", "cursor")}
    params = {name: value for name, value in params.items() if value}
    rows: list[Any] = []
    error, next_url = "", ""
    try:
        page = await trust.client_ledger(
            session, principal, build_list_query(TRUST_LIST, {**params, "limit": "50", "order": "desc"})
        )
    except ValidationFailed as exc:
        await session.rollback()
        error = refusal_text(exc)
    else:
        rows = page.rows
        if page.next_cursor:
            next_url = "/app/trust?" + urlencode({**params, "cursor": page.next_cursor})
    matters = await cases_by_id(session, {row.case_id for row in rows})
    context = {
        "entries": [TrustEntryOut.dump(row) for row in rows],
        "matters": matters,
        "contact_id": params.get("contact_id", ""),
        "error": error,
        "next_url": next_url,
        "can_reconcile": principal.acts_as_admin,
    }
    return render(request, "trust.html", context, me=me, nav="trust", status_code=422 if error else 200)


@router.get("/app/trust/reconciliation")
async def reconciliation(
    request: Request, principal: TrustRead, session: SessionDep, runtime: RuntimeDep
) -> HTMLResponse:
    """The three-way reconciliation of a month, as `GET /trust/reconciliation` (an administrator's
    report: the firm's whole trust account)."""
    if not principal.acts_as_admin:
        raise admin_required()
    me = await viewer(session, principal)
    month = request.query_params.get("month", "").strip()
    bank = request.query_params.get("bank_balance", "").strip()
    report: dict[str, Any] | None = None
    error = ""
    if month and bank:
        # The API's query checks first (its patterns), then the service's.
        if not MONTH.fullmatch(month):
            error = "month: A month as YYYY-MM"
        elif not BANK_BALANCE.fullmatch(bank):
            error = "bank_balance: An amount such as 1250.00"
        else:
            outcome = await attempt(
                session,
                lambda: trust.reconcile(
                    session, runtime.settings, principal, month=month, bank_balance=bank, currency=None
                ),
            )
            report, error = (None, outcome.message) if isinstance(outcome, Refused) else (outcome, "")
    matters = await cases_by_id(
        session, {d["case_id"] for d in (report or {}).get("differences", []) if d["case_id"]}
    )
    # The client ledgers by name (an administrator's report: they read contacts).
    named = [line["contact_id"] for line in (report or {}).get("clients", []) if line["contact_id"]]
    clients = {c.id: c.name for c in [await session.get(Contact, contact_id) for contact_id in named] if c}
    context = {
        "report": report,
        "month": month,
        "bank": bank,
        "error": error,
        "matters": matters,
        "clients": clients,
    }
    return render(
        request, "reconciliation.html", context, me=me, nav="trust", status_code=422 if error else 200
    )
