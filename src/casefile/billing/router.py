"""Time entries, timers, expenses, rates and the UTBMS codes (docs/billing.md)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from fastapi.responses import JSONResponse

from casefile import envelope
from casefile.access.dependencies import CaseInPath, CaseToWrite
from casefile.access.matter import Level, case_for
from casefile.billing import suggestions, time_service, utbms
from casefile.billing.dependencies import (
    DAY_PATTERN,
    BillingApprove,
    BillingRead,
    BillingWrite,
    DayText,
    query_day,
    visible_cases,
)
from casefile.billing.repository import EXPENSE_LIST, TIME_LIST
from casefile.billing.schemas import (
    ExpenseCreate,
    ExpenseOut,
    RateOut,
    RateSet,
    TimeEntryCreate,
    TimeEntryOut,
    TimeEntryUpdate,
    TimerOut,
    TimerStart,
)
from casefile.envelope import DeletedOut, Envelope, PageEnvelope
from casefile.listing import ListQuery, list_query
from casefile.models import Timer
from casefile.request_scope import RuntimeDep, SessionDep

router = APIRouter(tags=["billing"])
TimeQuery = Annotated[ListQuery, Depends(list_query(TIME_LIST))]
ExpenseQuery = Annotated[ListQuery, Depends(list_query(EXPENSE_LIST))]


def _timer(timer: Timer) -> dict[str, Any]:
    return TimerOut(
        id=timer.id,
        user_id=timer.user_id,
        case_id=timer.case_id,
        description=timer.description,
        running=timer.running_since is not None,
        elapsed_seconds=time_service.elapsed(timer),
        created_at=timer.created_at,
    ).model_dump(mode="json")


@router.get("/time-entries", response_model=PageEnvelope[TimeEntryOut])
async def list_time_entries(principal: BillingRead, session: SessionDep, query: TimeQuery) -> JSONResponse:
    """Time entries on every case the caller may see: filters `state`, `user_id`, `case_id`,
    `invoice_id`, `billable`; `search` in the description."""
    page = await time_service.list_entries(session, query, case=None, visible=visible_cases(principal))
    return envelope.listed(page, query, TimeEntryOut.dump)


@router.get("/time-entries/suggestions", response_model=Envelope[list[suggestions.SuggestionOut]])
async def suggest_time(
    principal: BillingWrite,
    session: SessionDep,
    runtime: RuntimeDep,
    day: Annotated[DayText, Query(alias="date", pattern=DAY_PATTERN, description="The day (YYYY-MM-DD)")],
) -> JSONResponse:
    """Draft entries for the caller from their own activity that day (the audit trail), one per
    matter they may still see, with an estimated duration and what was done. Accept one by
    posting it to `/cases/{case_id}/time-entries`."""
    return envelope.ok(
        await suggestions.suggest(session, runtime.settings, principal, query_day(day, "date"))
    )


@router.get("/cases/{case_id}/time-entries", response_model=PageEnvelope[TimeEntryOut])
async def list_case_time(
    _: BillingRead, case: CaseInPath, session: SessionDep, query: TimeQuery
) -> JSONResponse:
    """The case's time entries."""
    page = await time_service.list_entries(session, query, case=case, visible=None)
    return envelope.listed(page, query, TimeEntryOut.dump)


@router.post("/cases/{case_id}/time-entries", response_model=Envelope[TimeEntryOut], status_code=201)
async def create_time_entry(
    principal: BillingWrite,
    case: CaseToWrite,
    body: TimeEntryCreate,
    session: SessionDep,
    runtime: RuntimeDep,
) -> JSONResponse:
    """Record time: `seconds` and `description`, or `text` ("1h20 drafted answer", "0.3 call with
    client"). Billed at the firm's increment and the rate that applies now, frozen on the entry.
    Emits `time_entry.created`."""
    entry = await time_service.create_entry(session, runtime.settings, principal, case, body)
    return envelope.created(TimeEntryOut.dump(entry), location=f"/api/v1/time-entries/{entry.id}")


@router.get("/time-entries/{entry_id}", response_model=Envelope[TimeEntryOut])
async def get_time_entry(entry_id: str, principal: BillingRead, session: SessionDep) -> JSONResponse:
    return envelope.ok(
        TimeEntryOut.dump(await time_service.entry_for(session, principal, entry_id, Level.READ))
    )


@router.patch("/time-entries/{entry_id}", response_model=Envelope[TimeEntryOut])
async def update_time_entry(
    entry_id: str, body: TimeEntryUpdate, principal: BillingWrite, session: SessionDep, runtime: RuntimeDep
) -> JSONResponse:
    """Change a draft or ready entry; a billed one (or one on a draft invoice) is 409."""
    entry = await time_service.entry_for(session, principal, entry_id, Level.WRITE)
    return envelope.ok(
        TimeEntryOut.dump(await time_service.update_entry(session, runtime.settings, principal, entry, body))
    )


@router.delete("/time-entries/{entry_id}", response_model=Envelope[DeletedOut])
async def delete_time_entry(entry_id: str, principal: BillingWrite, session: SessionDep) -> JSONResponse:
    entry = await time_service.entry_for(session, principal, entry_id, Level.WRITE)
    await time_service.delete_entry(session, principal, entry)
    return envelope.deleted(entry_id)


@router.get("/timers", response_model=Envelope[list[TimerOut]])
async def list_timers(principal: BillingWrite, session: SessionDep) -> JSONResponse:
    """The caller's timers (at most one running)."""
    return envelope.ok([_timer(t) for t in await time_service.list_timers(session, principal)])


@router.post("/timers", response_model=Envelope[TimerOut], status_code=201)
async def start_timer(body: TimerStart, principal: BillingWrite, session: SessionDep) -> JSONResponse:
    """Start a timer on a case; the caller's running timer, if any, is paused."""
    case = await case_for(session, principal, body.case_id, Level.WRITE)
    timer = await time_service.start_timer(session, principal, case, body.description)
    return envelope.created(_timer(timer), location=f"/api/v1/timers/{timer.id}")


@router.post("/timers/{timer_id}/pause", response_model=Envelope[TimerOut])
async def pause_timer(timer_id: str, principal: BillingWrite, session: SessionDep) -> JSONResponse:
    timer = await time_service.timer_for(session, principal, timer_id)
    return envelope.ok(_timer(await time_service.pause_timer(timer)))


@router.post("/timers/{timer_id}/resume", response_model=Envelope[TimerOut])
async def resume_timer(timer_id: str, principal: BillingWrite, session: SessionDep) -> JSONResponse:
    timer = await time_service.timer_for(session, principal, timer_id)
    return envelope.ok(_timer(await time_service.resume_timer(session, timer)))


@router.post("/timers/{timer_id}/stop", response_model=Envelope[TimeEntryOut], status_code=201)
async def stop_timer(
    timer_id: str, principal: BillingWrite, session: SessionDep, runtime: RuntimeDep
) -> JSONResponse:
    """Stop the timer: it becomes a draft time entry on its case."""
    timer = await time_service.timer_for(session, principal, timer_id)
    entry = await time_service.stop_timer(session, runtime.settings, principal, timer)
    return envelope.created(TimeEntryOut.dump(entry), location=f"/api/v1/time-entries/{entry.id}")


@router.get("/cases/{case_id}/expenses", response_model=PageEnvelope[ExpenseOut])
async def list_expenses(
    _: BillingRead, case: CaseInPath, session: SessionDep, query: ExpenseQuery
) -> JSONResponse:
    return envelope.listed(await time_service.list_expenses(session, case, query), query, ExpenseOut.dump)


@router.post("/cases/{case_id}/expenses", response_model=Envelope[ExpenseOut], status_code=201)
async def create_expense(
    principal: BillingWrite, case: CaseToWrite, body: ExpenseCreate, session: SessionDep, runtime: RuntimeDep
) -> JSONResponse:
    """An expense, with its receipt (a document of the case) if there is one."""
    expense = await time_service.create_expense(session, runtime.settings, principal, case, body)
    return envelope.created(ExpenseOut.dump(expense), location=f"/api/v1/cases/{case.id}/expenses")


@router.get("/billing/rates", response_model=Envelope[list[RateOut]])
async def list_rates(principal: BillingRead, session: SessionDep, user_id: str | None = None) -> JSONResponse:
    """The rates; a matter's rate only where the caller may see the matter."""
    rates = await time_service.list_rates(session, user_id, visible_cases(principal))
    return envelope.ok([RateOut.dump(r) for r in rates])


@router.put("/billing/rates", response_model=Envelope[RateOut])
async def set_rate(
    principal: BillingApprove, body: RateSet, session: SessionDep, runtime: RuntimeDep
) -> JSONResponse:
    """A user's default hourly rate, or their rate for one client (`contact_id`) or one matter
    (`case_id`): the matter's wins over the client's, which wins over the default."""
    return envelope.ok(RateOut.dump(await time_service.set_rate(session, runtime.settings, principal, body)))


@router.get("/billing/utbms-codes", response_model=Envelope[dict[str, dict[str, str]]])
async def utbms_codes(_: BillingRead) -> JSONResponse:
    """The UTBMS litigation task, activity and expense codes."""
    return envelope.ok(utbms.codes())
