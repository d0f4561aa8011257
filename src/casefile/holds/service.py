"""Placing, listing and releasing legal holds (docs/api-conventions.md#legal-holds). What a hold
blocks is checked where the blocked change happens, through `access.holds.ensure_no_hold`."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from casefile.access.matter import ensure_outside_walls
from casefile.audit import service as audit
from casefile.auth.permissions import Principal
from casefile.clock import utcnow
from casefile.db import get_or_404
from casefile.events import payloads
from casefile.events.outbox import emit
from casefile.holds.repository import HOLD_LIST
from casefile.holds.schemas import HoldCreate
from casefile.listing import ListQuery, Page, fetch_page
from casefile.models import Case, LegalHold


async def place_hold(session: AsyncSession, actor: Principal, case: Case, body: HoldCreate) -> LegalHold:
    """`case`: loaded with `manage` for the caller (`access.matter.case_for`), which locks its
    row: that orders this with a concurrent deletion or purge in the case (they lock it too,
    `access.holds.ensure_no_hold`): that one finished first (a trashed case is then 404), or it
    waits for this hold and then sees it."""
    hold = LegalHold(case_id=case.id, reason=body.reason, created_by=actor.actor_id, created_at=utcnow())
    session.add(hold)
    await session.flush()
    await emit(session, "case.hold_placed", payloads.case_hold_placed(hold))
    return hold


async def list_holds(session: AsyncSession, case: Case, query: ListQuery) -> Page[LegalHold]:
    page = await fetch_page(session, HOLD_LIST, query, conditions=[LegalHold.case_id == case.id])
    await audit.record_read(session, "hold.list", resource_type="case", resource_id=case.id, case_id=case.id)
    return page


async def release_hold(session: AsyncSession, actor: Principal, hold_id: str) -> LegalHold:
    """Release an active hold (emits `case.hold_released`); releasing a released hold changes
    nothing and emits nothing. A hold on a matter the administrator is walled off from is 404,
    as if it did not exist (docs/api-conventions.md#administrators-behind-walls)."""
    hold = await get_or_404(session, LegalHold, hold_id, "Legal hold not found")
    await ensure_outside_walls(session, actor, hold.case_id, "Legal hold not found")
    if hold.released_at is None:
        hold.released_at = utcnow()
        hold.released_by = actor.actor_id
        await session.flush()
        await emit(session, "case.hold_released", payloads.case_hold_released(hold))
    return hold
