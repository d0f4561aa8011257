"""The one check every destructive path makes: is the case under an active legal hold?"""

from __future__ import annotations

from sqlalchemy import exists, select
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.errors import LegalHoldActive
from casefile.holds.models import LegalHold


async def has_active_hold(session: AsyncSession, case_id: str) -> bool:
    active = exists().where(LegalHold.case_id == case_id, LegalHold.released_at.is_(None))
    return bool(await session.scalar(select(active)))


async def ensure_no_hold(session: AsyncSession, case_id: str, action: str) -> None:
    """409 LEGAL_HOLD if the case is held. Whoever asks, administrators and `delete:*` keys
    included: a hold is released explicitly, never overridden.

    The caller has locked the case's row (get_or_404 in a writing transaction), and placing a
    hold locks it too, so a hold placed concurrently is either seen here or placed after."""
    if await has_active_hold(session, case_id):
        raise LegalHoldActive(f"The case is under a legal hold: {action} is not allowed until it is released")
