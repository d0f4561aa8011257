"""Matter-level access (docs/api-conventions.md#matter-access): who may see and change a case.

This is the one mechanism every path goes through: a case the caller may not see is 404 exactly as
if it did not exist, and every query that lists or counts cases (or what belongs to them:
documents, search hits, jobs, tasks, parties…) adds `visible_to(principal)` to its SQL, so the
decision is part of the query, never a filter after fetching.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum

from sqlalchemy import ColumnElement, select
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.auth.permissions import Principal
from casefile.cases.models import Case
from casefile.errors import NotFound


class Level(IntEnum):
    """A caller's right on one case; each level includes those below it."""

    NONE = 0
    READ = 1
    WRITE = 2
    MANAGE = 3


class CaseNotVisible(NotFound):
    """The caller may not see this case: answered exactly like a case that does not exist, and
    recorded in the audit trail as a denied access."""

    message = "Case not found"

    def __init__(self, case_id: str) -> None:
        super().__init__("Case not found")
        self.case_id = case_id


def visible_to(principal: Principal) -> ColumnElement[bool]:
    """SQL condition on `cases`: the cases `principal` may see."""
    # A trashed case is gone for everyone, administrators included, until restored through
    # /admin/trash (docs/api-conventions.md#trash).
    return not_trashed()


def not_trashed() -> ColumnElement[bool]:
    """SQL condition on `cases`: not in the trash. Part of `visible_to`; on its own only where no
    caller is involved (a case's lookup by id, background work)."""
    return Case.deleted_at.is_(None)


async def case_for(
    session: AsyncSession, principal: Principal, case_id: str, level: Level = Level.READ
) -> Case:
    """The case `case_id` if `principal` may see it (else CaseNotVisible, 404) and has `level` on
    it (else 403)."""
    case = await session.scalar(select(Case).where(Case.id == case_id, visible_to(principal)))
    if case is None:
        raise CaseNotVisible(case_id)
    return case


async def visible_case_ids(session: AsyncSession, principal: Principal, case_ids: Iterable[str]) -> set[str]:
    """Which of `case_ids` `principal` may see."""
    wanted = set(case_ids)
    if not wanted:
        return set()
    rows = await session.scalars(select(Case.id).where(Case.id.in_(wanted), visible_to(principal)))
    return set(rows)
