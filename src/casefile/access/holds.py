"""The one check every destructive path makes: is the case under an active legal hold?"""

from __future__ import annotations

from sqlalchemy import exists, select
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.errors import LegalHoldActive
from casefile.models import Case, LegalHold


async def has_active_hold(session: AsyncSession, case_id: str) -> bool:
    active = exists().where(LegalHold.case_id == case_id, LegalHold.released_at.is_(None))
    return bool(await session.scalar(select(active)))


async def lock_case(session: AsyncSession, case_id: str) -> None:
    """Hold the case's row lock until the transaction ends (PostgreSQL; SQLite's writers run one
    at a time). Taken before any of the case's document rows, by every path that locks both
    (deleting or purging a case, a document, placing a hold): one order, so no deadlock."""
    await session.execute(select(Case.id).where(Case.id == case_id).with_for_update())


async def ensure_no_hold(session: AsyncSession, case_id: str, action: str) -> None:
    """409 LEGAL_HOLD if the case is held. Whoever asks, administrators and `delete:*` keys
    included: a hold is released explicitly, never overridden.

    The case's row is locked first (see `lock_case`), as placing a hold locks it: a hold placed
    concurrently is either seen here, or placed after this change has committed."""
    await lock_case(session, case_id)
    if await has_active_hold(session, case_id):
        raise LegalHoldActive(f"The case is under a legal hold: {action} is not allowed until it is released")
