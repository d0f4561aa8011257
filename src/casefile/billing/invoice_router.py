"""Invoices, their payments (from the client or from trust), the PDF, LEDES, and AR aging."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from fastapi.responses import JSONResponse, Response
from sqlalchemy import select

from casefile import envelope
from casefile.access.dependencies import CaseToWrite
from casefile.access.matter import Level, case_for
from casefile.audit import service as audit
from casefile.auth.dependencies import Require
from casefile.auth.permissions import Permission, Principal
from casefile.billing import invoice_service, ledes, pdf
from casefile.billing.dependencies import (
    DAY_PATTERN,
    BillingApprove,
    BillingRead,
    BillingWrite,
    DayText,
    query_currency,
    query_day,
    visible_cases,
)
from casefile.billing.invoice_schemas import (
    AgingOut,
    InvoiceCreate,
    InvoiceOut,
    InvoiceUpdate,
    LineUpdate,
    PaymentCreate,
    PaymentOut,
)
from casefile.billing.repository import INVOICE_LIST, open_invoices
from casefile.clock import utcnow
from casefile.envelope import Envelope, PageEnvelope
from casefile.errors import NotFound
from casefile.listing import ListQuery, fetch_page, list_query
from casefile.models import Contact, Invoice, User
from casefile.money import CurrencyText
from casefile.request_scope import RuntimeDep, SessionDep
from casefile.trust import repository as trust_repository
from casefile.trust import service as trust
from casefile.trust.schemas import TrustEntryOut, TrustTransfer

router = APIRouter(tags=["invoices"])
InvoiceQuery = Annotated[ListQuery, Depends(list_query(INVOICE_LIST))]
TrustWrite = Annotated[Principal, Depends(Require(Permission.WRITE_TRUST))]


async def _full(session: Any, invoice: Invoice) -> dict[str, Any]:
    return InvoiceOut.dump(invoice, await invoice_service.lines_of(session, invoice))


@router.get("/invoices", response_model=PageEnvelope[InvoiceOut])
async def list_invoices(principal: BillingRead, session: SessionDep, query: InvoiceQuery) -> JSONResponse:
    """Invoices on every case the caller may see: filters `state`, `case_id`, `number`."""
    page = await fetch_page(
        session, INVOICE_LIST, query, conditions=[Invoice.case_id.in_(visible_cases(principal))]
    )
    return envelope.listed(page, query, InvoiceOut.dump)


@router.post("/cases/{case_id}/invoices", response_model=Envelope[InvoiceOut], status_code=201)
async def draft_invoice(
    principal: BillingWrite, case: CaseToWrite, body: InvoiceCreate, session: SessionDep, runtime: RuntimeDep
) -> JSONResponse:
    """A draft from the case's unbilled billable time and expenses dated in [start, end]."""
    invoice, lines = await invoice_service.draft(session, runtime.settings, principal, case, body)
    return envelope.created(InvoiceOut.dump(invoice, lines), location=f"/api/v1/invoices/{invoice.id}")


@router.get("/invoices/{invoice_id}", response_model=Envelope[InvoiceOut])
async def get_invoice(invoice_id: str, principal: BillingRead, session: SessionDep) -> JSONResponse:
    invoice = await invoice_service.invoice_for(session, principal, invoice_id, Level.READ)
    await audit.record_read(
        session, "invoice.read", resource_type="invoice", resource_id=invoice.id, case_id=invoice.case_id
    )
    return envelope.ok(await _full(session, invoice))


@router.patch("/invoices/{invoice_id}", response_model=Envelope[InvoiceOut])
async def update_invoice(
    invoice_id: str, body: InvoiceUpdate, principal: BillingWrite, session: SessionDep
) -> JSONResponse:
    """A draft's discount or tax; anything but a draft is 409."""
    invoice = await invoice_service.invoice_for(session, principal, invoice_id, Level.WRITE)
    return envelope.ok(InvoiceOut.dump(invoice, await invoice_service.update_draft(session, invoice, body)))


@router.patch("/invoices/{invoice_id}/lines/{line_id}", response_model=Envelope[InvoiceOut])
async def write_off_line(
    invoice_id: str, line_id: str, body: LineUpdate, principal: BillingWrite, session: SessionDep
) -> JSONResponse:
    """Write off part or all of a draft's line."""
    invoice = await invoice_service.invoice_for(session, principal, invoice_id, Level.WRITE)
    lines = await invoice_service.write_off(session, invoice, line_id, body.write_off)
    return envelope.ok(InvoiceOut.dump(invoice, lines))


async def _move(
    invoice_id: str, action: str, principal: Principal, session: Any, runtime: Any
) -> JSONResponse:
    invoice = await invoice_service.invoice_for(session, principal, invoice_id, Level.WRITE)
    await invoice_service.move(session, runtime.settings, principal, invoice, action)
    return envelope.ok(await _full(session, invoice))


@router.post("/invoices/{invoice_id}/approve", response_model=Envelope[InvoiceOut])
async def approve_invoice(
    invoice_id: str, principal: BillingApprove, session: SessionDep, runtime: RuntimeDep
) -> JSONResponse:
    """Number it (the firm's next number, no gaps) and freeze its entries (`billed`). Emits
    `invoice.approved`; 409 unless a draft."""
    return await _move(invoice_id, "approve", principal, session, runtime)


@router.post("/invoices/{invoice_id}/send", response_model=Envelope[InvoiceOut])
async def send_invoice(
    invoice_id: str, principal: BillingWrite, session: SessionDep, runtime: RuntimeDep
) -> JSONResponse:
    """Mark an approved invoice sent; 409 otherwise."""
    return await _move(invoice_id, "send", principal, session, runtime)


@router.post("/invoices/{invoice_id}/void", response_model=Envelope[InvoiceOut])
async def void_invoice(
    invoice_id: str, principal: BillingApprove, session: SessionDep, runtime: RuntimeDep
) -> JSONResponse:
    """Void a draft, approved or sent invoice with no payments; its entries are billable again,
    its number stays used. 409 otherwise."""
    return await _move(invoice_id, "void", principal, session, runtime)


@router.post("/invoices/{invoice_id}/payments", response_model=Envelope[PaymentOut], status_code=201)
async def pay_invoice(
    invoice_id: str, body: PaymentCreate, principal: BillingWrite, session: SessionDep
) -> JSONResponse:
    """Record a payment of part or all of the balance; the invoice is `paid` (event
    `invoice.paid`) when nothing is left."""
    invoice = await invoice_service.invoice_for(session, principal, invoice_id, Level.WRITE)
    payment = await invoice_service.record_payment(session, principal, invoice, body)
    return envelope.created(PaymentOut.dump(payment), location=f"/api/v1/invoices/{invoice.id}/payments")


@router.get("/invoices/{invoice_id}/payments", response_model=Envelope[list[PaymentOut]])
async def invoice_payments(invoice_id: str, principal: BillingRead, session: SessionDep) -> JSONResponse:
    invoice = await invoice_service.invoice_for(session, principal, invoice_id, Level.READ)
    return envelope.ok([PaymentOut.dump(p) for p in await invoice_service.payments_of(session, invoice)])


@router.post("/cases/{case_id}/trust/transfers", response_model=Envelope[TrustEntryOut], status_code=201)
async def pay_from_trust(
    principal: TrustWrite, case: CaseToWrite, body: TrustTransfer, session: SessionDep
) -> JSONResponse:
    """Move client money to the operating account to pay an approved (or sent) invoice of this
    matter: a `transfer` trust entry and a payment on the invoice, in one transaction."""
    invoice = await invoice_service.invoice_for(session, principal, body.invoice_id, Level.WRITE)
    if invoice.case_id != case.id:
        raise NotFound("Invoice not found")
    entry = await trust.transfer_for_invoice(
        session, principal, case, invoice=invoice, amount=body.amount, reference=body.reference
    )
    payment = PaymentCreate(amount=body.amount, reference=body.reference)
    await invoice_service.record_payment(session, principal, invoice, payment, trust_entry_id=entry.id)
    return envelope.created(TrustEntryOut.dump(entry), location=f"/api/v1/trust/entries/{entry.id}")


async def _document_parts(session: Any, principal: Principal, invoice_id: str) -> tuple[Any, ...]:
    invoice = await invoice_service.invoice_for(session, principal, invoice_id, Level.READ)
    case = await case_for(session, principal, invoice.case_id)
    lines = await invoice_service.lines_of(session, invoice)
    users = {line.user_id for line in lines if line.user_id}
    names = dict((await session.execute(select(User.id, User.name).where(User.id.in_(sorted(users))))).all())
    client_id = await trust_repository.client_of(session, case)
    client = await session.get(Contact, client_id) if client_id else None
    await audit.record_read(
        session, "invoice.export", resource_type="invoice", resource_id=invoice.id, case_id=case.id
    )
    return invoice, lines, case, client, names


@router.get(
    "/invoices/{invoice_id}/pdf",
    response_class=Response,
    responses={200: {"content": {"application/pdf": {}}}},
)
async def invoice_pdf(
    invoice_id: str, principal: BillingRead, session: SessionDep, runtime: RuntimeDep
) -> Response:
    invoice, lines, case, client, names = await _document_parts(session, principal, invoice_id)
    client_name = client.name if client else case.client_name or ""
    body = pdf.render(
        invoice, lines, case=case, firm=runtime.settings.billing_firm_name, client=client_name, names=names
    )
    filename = f"{invoice.number or invoice.id}.pdf"
    return Response(
        body,
        media_type="application/pdf",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )


@router.get(
    "/invoices/{invoice_id}/ledes", response_class=Response, responses={200: {"content": {"text/plain": {}}}}
)
async def invoice_ledes(
    invoice_id: str, principal: BillingRead, session: SessionDep, runtime: RuntimeDep
) -> Response:
    """The invoice as a LEDES 1998B file."""
    invoice, lines, case, client, names = await _document_parts(session, principal, invoice_id)
    client_id = client.id if client else ""
    settings = runtime.settings
    body = ledes.render(
        invoice, lines, case=case, firm_id=settings.billing_firm_id, client_id=client_id, names=names
    )
    filename = f"{invoice.number or invoice.id}.ledes.txt"
    return Response(
        body,
        media_type="text/plain; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )


@router.get("/billing/reports/aging", response_model=Envelope[AgingOut])
async def aging_report(
    principal: BillingRead,
    session: SessionDep,
    runtime: RuntimeDep,
    as_of: Annotated[
        DayText | None, Query(pattern=DAY_PATTERN, description="YYYY-MM-DD; today by default")
    ] = None,
    currency: Annotated[CurrencyText | None, Query(pattern=r"^[A-Z]{3}$")] = None,
) -> JSONResponse:
    """Accounts receivable by age (days since the invoice date): 0-30, 31-60, 61-90, 90+, over
    the invoices of the cases the caller may see."""
    day = query_day(as_of, "as_of") if as_of else utcnow().date()
    code = query_currency(currency) if currency else runtime.settings.billing_currency
    invoices = await open_invoices(session, day, visible_cases(principal))
    report = invoice_service.aging(invoices, day, code)
    return envelope.ok(AgingOut.model_validate(report).model_dump(mode="json"))
