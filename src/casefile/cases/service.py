"""Case rules: required title, unique case number, automatic numbers, the status lifecycle,
assignees, and the events each change emits."""

from __future__ import annotations

from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.auth.permissions import Principal
from casefile.cases import repository
from casefile.cases.models import Case, CaseAssignee
from casefile.cases.repository import CASE_LIST
from casefile.cases.schemas import (
    CASE_NUMBER_TAKEN,
    TITLE_REQUIRED,
    TRANSITIONS,
    CaseCreate,
    CaseUpdate,
)
from casefile.clock import utcnow
from casefile.contacts import service as contacts_service
from casefile.documents import service as documents_service
from casefile.errors import ErrorDetail, InvalidStatusTransition, NotFound, ValidationFailed
from casefile.events import catalogue
from casefile.events.outbox import emit
from casefile.listing import ListQuery, fetch_page
from casefile.runtime import Runtime
from casefile.users.models import User

AUTO_NUMBER_ATTEMPTS = 5


def _is_case_number_conflict(exc: IntegrityError) -> bool:
    return "case_number" in str(exc.orig)


async def _flush_checking_number(session: AsyncSession, case: Case) -> None:
    """Write the case inside a savepoint; the database's unique index decides duplicates (no
    check-then-insert race). A refused new case leaves the session as it was before the add."""
    try:
        async with session.begin_nested():
            session.add(case)
            await session.flush()
    except IntegrityError as exc:
        if _is_case_number_conflict(exc):
            raise ValidationFailed.on("case_number", CASE_NUMBER_TAKEN) from exc
        raise


async def list_cases(session: AsyncSession, query: ListQuery) -> tuple[list[Case], int]:
    return await fetch_page(session, CASE_LIST, query)


async def create_case(session: AsyncSession, actor: Principal, body: CaseCreate) -> Case:
    if not body.title:
        problems = [ErrorDetail("title", TITLE_REQUIRED)]
        # Nothing will be inserted, so this read only completes the report; it decides nothing.
        if body.case_number and await repository.case_number_taken(session, body.case_number):
            problems.append(ErrorDetail("case_number", CASE_NUMBER_TAKEN))
        raise ValidationFailed(details=problems)
    now = utcnow()
    case = Case(
        **body.model_dump(exclude={"case_number"}),
        created_by=actor.actor_id,
        created_at=now,
        updated_at=now,
        assignees=[],
    )
    if body.case_number:
        case.case_number = body.case_number
        await _flush_checking_number(session, case)
    else:
        await _insert_with_automatic_number(session, case)
    await emit(session, "case.created", catalogue.case_created(case))
    # A client name makes a client party (docs/api-conventions.md#parties): a found or new contact.
    await contacts_service.link_client(session, actor, case)
    return case


async def _insert_with_automatic_number(session: AsyncSession, case: Case) -> None:
    # The counter never repeats a number, but someone may have typed that number by hand: then
    # take the next one.
    for _ in range(AUTO_NUMBER_ATTEMPTS):
        case.case_number = await repository.next_case_number(session, case.created_at.year)
        try:
            await _flush_checking_number(session, case)
            return
        except ValidationFailed:
            continue
    raise ValidationFailed.on("case_number", "Could not assign a case number; give one explicitly")


async def update_case(session: AsyncSession, actor: Principal, case: Case, body: CaseUpdate) -> Case:
    values = body.model_dump(exclude_unset=True)
    problems = []
    if "title" in values and not values["title"]:
        problems.append(ErrorDetail("title", TITLE_REQUIRED))
    for name in ("case_number", "status", "priority"):
        if name in values and values[name] is None:
            problems.append(ErrorDetail(name, f"{name} cannot be null"))
    if problems:
        raise ValidationFailed(details=problems)

    changes: dict[str, dict[str, Any]] = {
        name: {"from": getattr(case, name), "to": value}
        for name, value in values.items()
        if getattr(case, name) != value
    }
    if not changes:
        return case  # a no-op update changes nothing and emits nothing
    if "status" in changes:
        old, new = changes["status"]["from"], changes["status"]["to"]
        if new not in TRANSITIONS[old]:
            allowed = ", ".join(sorted(TRANSITIONS[old]))
            raise InvalidStatusTransition(
                f"A case cannot move from {old} to {new}; from {old} it can move to {allowed}"
            )
    for name, change in changes.items():
        setattr(case, name, change["to"])
    case.updated_at = utcnow()
    await _flush_checking_number(session, case)
    await emit(session, "case.updated", catalogue.case_updated(case, changes, actor.actor_id))
    if "status" in changes:
        await emit(
            session,
            "case.status_changed",
            catalogue.case_status_changed(
                case, changes["status"]["from"], changes["status"]["to"], actor.actor_id
            ),
        )
    return case


async def delete_case(session: AsyncSession, runtime: Runtime, actor: Principal, case: Case) -> None:
    """Delete the case with its documents and (after the commit) their content."""
    documents = await documents_service.documents_of_case(session, case.id)
    await documents_service.remove_documents(session, runtime, actor, documents, reason="case_deleted")
    await emit(session, "case.deleted", catalogue.case_deleted(case, actor.actor_id))
    await session.delete(case)
    await session.flush()


async def add_assignee(session: AsyncSession, actor: Principal, case: Case, user_id: str) -> Case:
    if await session.get(User, user_id) is None:
        raise ValidationFailed.on("user_id", "User not found")
    if user_id in case.assigned_to:
        return case  # already assigned: nothing changes, nothing is emitted
    case.assignees.append(CaseAssignee(user_id=user_id, assigned_by=actor.actor_id, assigned_at=utcnow()))
    case.updated_at = utcnow()
    await session.flush()
    await emit(session, "case.assigned", catalogue.case_assigned(case, user_id, actor.actor_id))
    return case


async def remove_assignee(session: AsyncSession, actor: Principal, case: Case, user_id: str) -> Case:
    before = case.assigned_to
    if user_id not in before:
        raise NotFound("That user is not assigned to this case")
    case.assignees = [a for a in case.assignees if a.user_id != user_id]
    case.updated_at = utcnow()
    await session.flush()
    changes = {"assigned_to": {"from": before, "to": case.assigned_to}}
    await emit(session, "case.updated", catalogue.case_updated(case, changes, actor.actor_id))
    return case
