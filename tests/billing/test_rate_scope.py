"""A rate's scope is one row even when two transactions set it for the first time at once. The
unique constraint cannot say so where the scope has no client or no matter (NULLs are distinct), so
it rests on the one locking rule (`db.get_or_404`): setting a rate locks its user's row, the second
transaction waits for the first, then finds its row and changes it."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from casefile.auth.permissions import ROLE_PERMISSIONS, Principal
from casefile.billing.schemas import RateSet
from casefile.billing.time_service import set_rate
from casefile.models import BillingRate, User
from casefile.settings import Settings
from tests.support.factories import unique

pytestmark = pytest.mark.anyio

ADMIN = Principal(kind="user", id="user_rates_admin", role="admin", permissions=ROLE_PERMISSIONS["admin"])


async def test_two_first_settings_of_a_default_rate_at_once_make_one_row(
    db_engine: AsyncEngine, db_settings: Settings
) -> None:
    user_id = unique("user_rate")
    async with AsyncSession(db_engine) as setup:
        setup.add(User(id=user_id, email=f"{user_id}@casefile.test", name="Rate", role="attorney"))
        await setup.commit()

    async def set_in(session: AsyncSession, amount: str) -> None:
        await set_rate(session, db_settings, ADMIN, RateSet(user_id=user_id, amount=amount))

    try:
        async with AsyncSession(db_engine) as first, AsyncSession(db_engine) as second:
            await set_in(first, "100.00")  # inserted, not committed
            # The second starts while the first is open: without the lock it would find no row
            # (the first's is uncommitted) and insert its own.
            later = asyncio.create_task(_set_and_commit(second, set_in, "200.00"))
            await asyncio.sleep(0.5)
            await first.commit()
            await asyncio.wait_for(later, timeout=30)
        async with AsyncSession(db_engine) as check:
            rows = (await check.scalars(select(BillingRate).where(BillingRate.user_id == user_id))).all()
        assert [(r.contact_id, r.case_id, r.rate_minor) for r in rows] == [(None, None, 20_000)]
    finally:
        async with AsyncSession(db_engine) as cleanup:
            await cleanup.execute(BillingRate.__table__.delete().where(BillingRate.user_id == user_id))
            await cleanup.execute(User.__table__.delete().where(User.id == user_id))
            await cleanup.commit()


async def _set_and_commit(session: AsyncSession, set_in, amount: str) -> None:  # type: ignore[no-untyped-def]
    await set_in(session, amount)
    await session.commit()
