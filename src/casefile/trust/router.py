"""Client money: a matter's trust ledger, deposits, payments out, reversals, and the month's
three-way reconciliation (docs/billing.md#trust-money). Transfers for an invoice are billing's
(`POST /cases/{case_id}/trust/transfers`)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from fastapi.responses import JSONResponse

from casefile import envelope
from casefile.access.dependencies import CaseInPath, CaseToWrite
from casefile.access.matter import Level, case_for
from casefile.auth.dependencies import Require
from casefile.auth.permissions import Permission, Principal
from casefile.envelope import Envelope, PageEnvelope
from casefile.errors import admin_required
from casefile.listing import ListQuery, list_query
from casefile.money import AMOUNT_PATTERN, CurrencyText, text
from casefile.request_scope import RuntimeDep, SessionDep
from casefile.trust import service
from casefile.trust.repository import TRUST_LIST
from casefile.trust.schemas import ReconciliationOut, TrustEntryOut, TrustMovement, TrustReversal

router = APIRouter(tags=["trust"])
TrustRead = Annotated[Principal, Depends(Require(Permission.READ_TRUST))]
TrustWrite = Annotated[Principal, Depends(Require(Permission.WRITE_TRUST))]
TrustQuery = Annotated[ListQuery, Depends(list_query(TRUST_LIST))]


@router.get("/cases/{case_id}/trust", response_model=PageEnvelope[TrustEntryOut])
async def trust_ledger(
    _: TrustRead, case: CaseInPath, session: SessionDep, query: TrustQuery
) -> JSONResponse:
    """The matter's trust entries (newest first by default); the balances per currency are in
    the `X-Trust-Balance` header as `USD 120.00, EUR 5.00`."""
    page, balances = await service.ledger(session, case, query)
    response = envelope.listed(page, query, TrustEntryOut.dump)
    response.headers["X-Trust-Balance"] = ", ".join(
        f"{b.currency} {text(b.balance_minor, b.currency)}" for b in balances
    )
    return response


@router.post("/cases/{case_id}/trust/deposits", response_model=Envelope[TrustEntryOut], status_code=201)
async def deposit(
    principal: TrustWrite, case: CaseToWrite, body: TrustMovement, session: SessionDep, runtime: RuntimeDep
) -> JSONResponse:
    """Client money received for this matter. Emits `trust.deposit`."""
    entry = await service.deposit(session, runtime.settings, principal, case, body)
    return envelope.created(TrustEntryOut.dump(entry), location=f"/api/v1/trust/entries/{entry.id}")


@router.post("/cases/{case_id}/trust/withdrawals", response_model=Envelope[TrustEntryOut], status_code=201)
async def withdraw(
    principal: TrustWrite, case: CaseToWrite, body: TrustMovement, session: SessionDep, runtime: RuntimeDep
) -> JSONResponse:
    """Client money paid out of this matter's trust funds; 409 when the balance does not cover
    it (never below zero, however many run at once). Emits `trust.withdrawal`."""
    entry = await service.withdraw(session, runtime.settings, principal, case, body)
    return envelope.created(TrustEntryOut.dump(entry), location=f"/api/v1/trust/entries/{entry.id}")


@router.get("/trust/entries", response_model=PageEnvelope[TrustEntryOut])
async def list_entries(principal: TrustRead, session: SessionDep, query: TrustQuery) -> JSONResponse:
    """Trust entries of every matter the caller may see; `contact_id=` gives a client's ledger
    across their matters; filters `kind`, `currency`."""
    return envelope.listed(await service.client_ledger(session, principal, query), query, TrustEntryOut.dump)


@router.get("/trust/entries/{entry_id}", response_model=Envelope[TrustEntryOut])
async def get_entry(entry_id: str, principal: TrustRead, session: SessionDep) -> JSONResponse:
    return envelope.ok(TrustEntryOut.dump(await service.entry_for(session, principal, entry_id, Level.READ)))


@router.post("/trust/entries/{entry_id}/reverse", response_model=Envelope[TrustEntryOut], status_code=201)
async def reverse(
    entry_id: str, body: TrustReversal, principal: TrustWrite, session: SessionDep
) -> JSONResponse:
    """A new entry of the opposite amount (entries are never edited or deleted); 409 for a
    transfer or a reversal, one already reversed, or one whose reversal would overdraw."""
    entry = await service.entry_for(session, principal, entry_id, Level.WRITE)
    case = await case_for(session, principal, entry.case_id, Level.WRITE)
    reversal = await service.reverse(session, principal, case, entry, body)
    return envelope.created(TrustEntryOut.dump(reversal), location=f"/api/v1/trust/entries/{reversal.id}")


@router.get("/trust/reconciliation", response_model=Envelope[ReconciliationOut])
async def reconciliation(
    *,
    principal: TrustRead,
    session: SessionDep,
    runtime: RuntimeDep,
    month: Annotated[str, Query(pattern=r"^[1-9]\d{3}-(0[1-9]|1[0-2])$", description="YYYY-MM")],
    bank_balance: Annotated[str, Query(pattern=AMOUNT_PATTERN, description="From the bank statement")],
    currency: Annotated[CurrencyText | None, Query(pattern=r"^[A-Z]{3}$")] = None,
) -> JSONResponse:
    """Three-way reconciliation at the month's end: bank statement, trust journal, and the sum
    of client ledgers, with every difference listed. The firm's whole trust account: an
    administrator's (or a key's with `read:trust` made by one) report."""
    if not principal.acts_as_admin:
        raise admin_required()
    report = await service.reconcile(
        session, runtime.settings, principal, month=month, bank_balance=bank_balance, currency=currency
    )
    return envelope.ok(ReconciliationOut.model_validate(report).model_dump(mode="json"))
