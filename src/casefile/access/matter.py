"""Matter-level access (docs/api-conventions.md#matter-access): who may see and change a case.

This is the one mechanism every path goes through: a case the caller may not see is 404 exactly as
if it did not exist, and every query that lists or counts cases (or what belongs to them:
documents, search hits, jobs, tasks, parties…) adds `visible_to(principal)` to its SQL, so the
decision is part of the query, never a filter after fetching.

The rules, for the user behind the call (an API key acts as the user who created it, narrowed by
its permissions and, if it has them, its `case_ids`):
- a wall on the user, or on a group they are in, removes every right on the case, whatever else;
- otherwise administrators and assignees have `manage`;
- otherwise the highest grant to the user or one of their groups;
- and on a `firm` case at least what the role gives (`write` with `write:cases`, else `read`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from enum import IntEnum
from typing import Any, Protocol, TypeVar

from sqlalchemy import ColumnElement, Select, and_, bindparam, delete, exists, false, or_, select, true
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute, aliased, joinedload

from casefile.auth.permissions import ROLE_PERMISSIONS, Permission, Principal, grants
from casefile.db import get_or_404, is_write_session
from casefile.errors import NotFound, case_access_missing
from casefile.models import Case, CaseAssignee, CaseGrant, CaseWall, Document, GroupMember


class Level(IntEnum):
    """A caller's right on one case; each level includes those below it."""

    NONE = 0
    READ = 1
    WRITE = 2
    MANAGE = 3

    @property
    def label(self) -> str:
        return self.name.lower()


LEVELS = ("read", "write", "manage")


class CaseNotVisible(NotFound):
    """The caller may not see this case: answered exactly like a case that does not exist (with
    the message of whatever the path named), and recorded in the audit trail as a denied access."""

    def __init__(self, case_id: str, message: str = "Case not found") -> None:
        super().__init__(message)
        self.case_id = case_id


def _is_subject(
    subject_type: InstrumentedAttribute[str], subject_id: InstrumentedAttribute[str], user_id: str
) -> ColumnElement[bool]:
    """The row names the user, or a group the user is in."""
    groups = select(GroupMember.group_id).where(GroupMember.user_id == user_id).scalar_subquery()
    return or_(
        and_(subject_type == "user", subject_id == user_id),
        and_(subject_type == "group", subject_id.in_(groups)),
    )


def _cases_naming(model: type[CaseGrant] | type[CaseWall], user_id: str) -> Select[Any]:
    """The ids of the cases whose grants (or walls) name the user or one of their groups."""
    return select(model.case_id).where(_is_subject(model.subject_type, model.subject_id, user_id))


def visible_to(principal: Principal) -> ColumnElement[bool]:
    """SQL condition on `cases`: the cases `principal` may see.

    Built from uncorrelated `IN (subquery)` tests: each subquery (the user's walls, assignments,
    grants) runs once per query and is probed per row, so a list's count over many cases stays
    cheap; per-row `EXISTS` cost several times more (bench/access_check.py)."""
    if principal.user_id is None:  # a key whose creator is gone acts as nobody
        return false()
    return _visible_condition(principal.user_id, principal.acts_as_admin, principal.key_case_ids)


# The condition depends only on these three facts (the rest is decided in SQL when it runs), so it
# is built once per caller: building it costs more CPU than the query it adds to, and the same
# expression object keeps its memoised cache key for SQLAlchemy's compiled-statement cache.
@functools.lru_cache(maxsize=4096)
def _visible_condition(
    user_id: str, acts_as_admin: bool, key_case_ids: frozenset[str] | None
) -> ColumnElement[bool]:
    # A trashed case is gone for everyone, administrators included, until restored through
    # /admin/trash (docs/api-conventions.md#trash).
    conditions: list[ColumnElement[bool]] = [not_trashed(), Case.id.not_in(_cases_naming(CaseWall, user_id))]
    if key_case_ids is not None:
        conditions.append(Case.id.in_(sorted(key_case_ids)) if key_case_ids else false())
    if not acts_as_admin:
        assigned = select(CaseAssignee.case_id).where(CaseAssignee.user_id == user_id)
        conditions.append(
            or_(Case.access == "firm", Case.id.in_(assigned), Case.id.in_(_cases_naming(CaseGrant, user_id)))
        )
    return and_(true(), *conditions)


def visible_ids(
    principal: Principal, case_id: ColumnElement[str] | InstrumentedAttribute[Any]
) -> ColumnElement[bool]:
    """SQL condition on a column of case ids (not on `cases`): exactly `visible_to`'s cases, for a
    query that reads ids elsewhere (a custom-field filter's value index) and should not read each
    matching case. The case-level facts become the few ids they exclude: trashed cases, and
    restricted ones the user reaches neither by assignment nor by grant, each from a partial index
    on `cases` (`access` is never NULL, so "not `firm`" is exactly "restricted")."""
    if principal.user_id is None:
        return false()
    return _visible_ids_condition(principal.user_id, principal.acts_as_admin, principal.key_case_ids, case_id)


@functools.lru_cache(maxsize=4096)
def _visible_ids_condition(
    user_id: str, acts_as_admin: bool, key_case_ids: frozenset[str] | None, case_id: Any
) -> ColumnElement[bool]:
    # NOT EXISTS rather than NOT IN: an anti-join, whatever the number of excluded ids (a NOT IN
    # list too large for work_mem would be probed row by row).
    trashed = aliased(Case, name="trashed_case")
    conditions: list[ColumnElement[bool]] = [
        ~exists().where(trashed.id == case_id, trashed.deleted_at.is_not(None)),
        case_id.not_in(_cases_naming(CaseWall, user_id)),
    ]
    if key_case_ids is not None:
        conditions.append(case_id.in_(sorted(key_case_ids)) if key_case_ids else false())
    if not acts_as_admin:
        hidden = aliased(Case, name="restricted_case")
        assigned = select(CaseAssignee.case_id).where(CaseAssignee.user_id == user_id)
        conditions.append(
            ~exists().where(
                hidden.id == case_id,
                hidden.access != "firm",
                hidden.id.not_in(assigned),
                hidden.id.not_in(_cases_naming(CaseGrant, user_id)),
            )
        )
    return and_(true(), *conditions)


async def level_on(session: AsyncSession, principal: Principal, case: Case) -> Level:
    """The caller's right on a case it can see (callers check visibility first, in SQL)."""
    user_id = principal.user_id
    if user_id is None:
        return Level.NONE
    if principal.acts_as_admin or user_id in case.assigned_to:
        return Level.MANAGE
    grant_levels = await session.scalars(
        select(CaseGrant.level).where(
            CaseGrant.case_id == case.id, _is_subject(CaseGrant.subject_type, CaseGrant.subject_id, user_id)
        )
    )
    level = max((Level[name.upper()] for name in grant_levels), default=Level.NONE)
    if case.access == "firm":
        level = max(level, _role_level(principal))
    return level


def _role_level(principal: Principal) -> Level:
    role = principal.role if principal.kind == "user" else principal.key_creator_role
    if role is None:
        return Level.NONE
    return Level.WRITE if grants(ROLE_PERMISSIONS[role], Permission.WRITE_CASES) else Level.READ


async def require_level(session: AsyncSession, principal: Principal, case: Case, level: Level) -> None:
    """403 when the caller, who can see `case`, has less than `level` on it."""
    if level > Level.READ and await level_on(session, principal, case) < level:
        raise case_access_missing(level.label, case.id)


def not_trashed() -> ColumnElement[bool]:
    """SQL condition on `cases`: not in the trash. Part of `visible_to`; on its own only where no
    caller is involved (a case's lookup by id, background work)."""
    return Case.deleted_at.is_(None)


async def case_for(
    session: AsyncSession,
    principal: Principal,
    case_id: str,
    level: Level = Level.READ,
    *,
    not_found: str = "Case not found",
) -> Case:
    """The case `case_id` if `principal` may see it (else CaseNotVisible: 404 `not_found`, the
    message of whatever the path named) and has `level` on it (else 403). In a write transaction
    the row is locked (as `db.get_or_404` does), so that the rules checked on it hold until the
    commit."""
    lock = is_write_session(session)
    statement = _case_statement(principal.user_id, principal.acts_as_admin, principal.key_case_ids, lock)
    result = await session.execute(statement, {"case_id": case_id})
    case = result.unique().scalar_one_or_none()
    if case is None:
        raise CaseNotVisible(case_id, not_found)
    await require_level(session, principal, case, level)
    return case


class InCase(Protocol):
    """A table whose rows belong to one case (documents, tasks, AI jobs, …)."""

    id: Any
    case_id: Any


RowT = TypeVar("RowT", bound=InCase)


async def row_in_case(
    session: AsyncSession,
    principal: Principal,
    model: type[RowT],
    row_id: str,
    level: Level = Level.READ,
    *,
    not_found: str,
) -> RowT:
    """The `model` row `row_id` if the caller may see its case (else 404 `not_found`, exactly as
    for a row that does not exist, and recorded as a denied access) with `level` on it (else 403).

    In a write transaction the case's row is locked before this one (as `case_for` and
    `db.get_or_404` lock them): the one order every path that locks both takes (deleting or
    purging a case or a document, placing a hold), so that none deadlock. A row never changes
    case, so reading its `case_id` first without a lock is safe."""
    case_id = await session.scalar(select(model.case_id).where(model.id == row_id))
    if case_id is None:
        raise NotFound(not_found)
    await case_for(session, principal, case_id, level, not_found=not_found)
    return await get_or_404(session, model, row_id, not_found)  # type: ignore[type-var]


@functools.lru_cache(maxsize=4096)
def _case_statement(
    user_id: str | None, acts_as_admin: bool, key_case_ids: frozenset[str] | None, lock: bool
) -> Select[Case]:
    """The case of `:case_id` as the caller may see it, built once per caller and mode (see
    `_visible_condition`).

    SQLite leaves FOR UPDATE out: its writers are serialised by BEGIN IMMEDIATE. When locking, the
    assignees are read by a second statement (the relationship's `selectin`) after the lock is
    granted: joined to this one, PostgreSQL would return them as they were before the wait (the
    statement's snapshot), missing a concurrent assignment. A read is one statement."""
    visible = false() if user_id is None else _visible_condition(user_id, acts_as_admin, key_case_ids)
    statement = select(Case).where(Case.id == bindparam("case_id"), visible)
    if lock:
        return statement.with_for_update(of=Case).execution_options(populate_existing=True)
    return statement.options(joinedload(Case.assignees))


async def document_for(
    session: AsyncSession, principal: Principal, document_id: str, level: Level = Level.READ
) -> Document:
    """The document if the caller may see its case (else 404 "Document not found", exactly as for
    a document that does not exist, or one in the trash) with `level` on it (else 403)."""
    message = "Document not found"
    document = await row_in_case(session, principal, Document, document_id, level, not_found=message)
    if document.deleted_at is not None:  # with its case or alone: restored through /admin/trash
        raise NotFound(message)
    return document


async def visible_case_ids(session: AsyncSession, principal: Principal, case_ids: Iterable[str]) -> set[str]:
    """Which of `case_ids` `principal` may see."""
    wanted = set(case_ids)
    if not wanted:
        return set()
    rows = await session.scalars(select(Case.id).where(Case.id.in_(sorted(wanted)), visible_to(principal)))
    return set(rows)


async def remove_subject(session: AsyncSession, subject_type: str, subject_id: str) -> None:
    """Remove every grant and wall that names a user or group being deleted: they name it by
    type and id, so no foreign key removes them with it."""
    for model in (CaseGrant, CaseWall):
        await session.execute(
            delete(model).where(model.subject_type == subject_type, model.subject_id == subject_id)
        )


async def access_settings_case(session: AsyncSession, principal: Principal, case_id: str) -> Case:
    """The case whose access settings the caller reads or replaces: with an administrator's own
    token any case, even one they are walled off from (not in the trash); otherwise `manage`."""
    if principal.is_admin_user:
        case = await get_or_404(session, Case, case_id, "Case not found")
        if case.deleted_at is not None:  # in the trash: restored through /admin/trash first
            raise NotFound("Case not found")
        return case
    return await case_for(session, principal, case_id, Level.MANAGE)


def walled_off(principal: Principal) -> Select[Any]:
    """The ids of the cases a wall keeps `principal` off (on the user or one of their groups).
    For the administration views (docs/api-conventions.md#administrators-behind-walls): what they
    show of a matter goes through `outside_walls`."""
    if principal.user_id is None:
        return select(Case.id)  # a key whose creator is gone acts as nobody: every case
    return _cases_naming(CaseWall, principal.user_id)


def outside_walls(
    principal: Principal, case_id: ColumnElement[Any] | InstrumentedAttribute[Any]
) -> ColumnElement[bool]:
    """SQL condition on a row that names a case (`case_id`, null for none): not a case the caller
    is walled off from. Administration views leave such rows out, as if they did not exist."""
    return or_(case_id.is_(None), case_id.not_in(walled_off(principal)))


async def ensure_outside_walls(
    session: AsyncSession, principal: Principal, case_id: str | None, not_found: str
) -> None:
    """404 `not_found` (exactly as for a missing row, and recorded as a denied access) when
    `case_id` is a case the caller is walled off from: an administration view's item of a walled
    matter does not exist for them."""
    if case_id is None:
        return
    walled = await session.scalar(
        select(Case.id).where(Case.id == case_id, Case.id.in_(walled_off(principal)))
    )
    if walled is not None:
        raise CaseNotVisible(case_id, not_found)
