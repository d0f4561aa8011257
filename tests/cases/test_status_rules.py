"""The case lifecycle as a rule of the service (`update_case`), on a transaction rolled back after
each test: every move the lifecycle allows is made and announced, every other is refused and
changes nothing. The same rule through HTTP: test_cases.py::test_status_lifecycle."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.auth.permissions import ROLE_PERMISSIONS, Principal
from casefile.cases.schemas import CaseCreate, CaseUpdate
from casefile.cases.service import create_case, update_case
from casefile.errors import InvalidStatusTransition
from casefile.events.outbox import write_outbox
from casefile.models import Event
from tests.support.expected import LIFECYCLE, STATUSES

pytestmark = pytest.mark.anyio

MOVES = [(start, target) for start in LIFECYCLE for target in LIFECYCLE if target != start]
ACTOR = Principal(kind="user", id="user_rules", role="attorney", permissions=ROLE_PERMISSIONS["attorney"])


async def recorded(session: AsyncSession, name: str) -> list[dict[str, Any]]:
    """The data of the events called `name` (the transaction is the test's own: no one else's).
    Events are written when their transaction commits; this one never does, so write them now."""
    await write_outbox(session)
    return [event.data for event in await session.scalars(select(Event).where(Event.name == name))]


@pytest.mark.parametrize(("start", "target"), [m for m in MOVES if m[1] in LIFECYCLE[m[0]]])
async def test_an_allowed_move_is_made_and_announced(
    db_session: AsyncSession, start: str, target: str
) -> None:
    case = await create_case(db_session, ACTOR, CaseCreate(title="Lifecycle", status=start))
    moved = await update_case(db_session, ACTOR, case, CaseUpdate(status=target))
    assert moved.status == target
    assert await recorded(db_session, "case.status_changed") == [
        {"case_id": case.id, "from": start, "to": target, "changed_by": ACTOR.id}
    ]


@pytest.mark.parametrize(("start", "target"), [m for m in MOVES if m[1] not in LIFECYCLE[m[0]]])
async def test_a_refused_move_changes_nothing(db_session: AsyncSession, start: str, target: str) -> None:
    case = await create_case(db_session, ACTOR, CaseCreate(title="Lifecycle", status=start))
    with pytest.raises(InvalidStatusTransition, match=f"cannot move from {start} to {target}"):
        await update_case(db_session, ACTOR, case, CaseUpdate(status=target))
    await db_session.refresh(case)
    assert case.status == start
    assert await recorded(db_session, "case.status_changed") == []
    assert await recorded(db_session, "case.updated") == []


async def test_the_refusal_names_the_moves_that_are_allowed(db_session: AsyncSession) -> None:
    case = await create_case(db_session, ACTOR, CaseCreate(title="Lifecycle", status="archived"))
    with pytest.raises(InvalidStatusTransition) as refused:
        await update_case(db_session, ACTOR, case, CaseUpdate(status="active"))
    assert refused.value.message == (
        "A case cannot move from archived to active; from archived it can move to closed"
    )


@pytest.mark.parametrize("status", STATUSES)
async def test_the_same_status_again_is_no_move(db_session: AsyncSession, status: str) -> None:
    case = await create_case(db_session, ACTOR, CaseCreate(title="Lifecycle", status=status))
    assert (await update_case(db_session, ACTOR, case, CaseUpdate(status=status))).status == status
    assert await recorded(db_session, "case.status_changed") == []
    assert await recorded(db_session, "case.updated") == []
