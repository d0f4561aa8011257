"""Case rules: required title, unique case number, automatic numbers, the status lifecycle,
assignees, and the events each change emits."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from casefile.access.holds import ensure_no_hold
from casefile.access.matter import Level, require_level, visible_ids, visible_to
from casefile.audit import service as audit
from casefile.auth.permissions import Principal
from casefile.cases import repository
from casefile.cases.repository import CASE_LIST
from casefile.cases.schemas import (
    CASE_NUMBER_TAKEN,
    TITLE_REQUIRED,
    TRANSITIONS,
    AccessEntry,
    CaseAccessBody,
    CaseCreate,
    CaseUpdate,
)
from casefile.clock import new_id, utcnow
from casefile.contacts import service as contacts_service
from casefile.customfields import service as custom_fields
from casefile.documents import service as documents_service
from casefile.errors import ErrorDetail, InvalidStatusTransition, NotFound, ValidationFailed
from casefile.events import payloads
from casefile.events.outbox import emit
from casefile.listing import ListQuery, Page, Projection, build_list_query, fetch_next, fetch_page
from casefile.models import Case, CaseAssignee, CaseGrant, CaseWall, Group, User

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


async def list_cases(session: AsyncSession, principal: Principal, query: ListQuery) -> Page[Case]:
    """The cases the caller may see (the access rule is part of the SQL, so totals count only
    those)."""
    assigned = query.filters.get("assigned_to")
    if assigned is not None and "me" in assigned:
        me = principal.user_id or ""  # a key whose creator is gone is assigned nothing
        query = replace(
            query, filters={**query.filters, "assigned_to": [me if v == "me" else v for v in assigned]}
        )
    if query.search_words is not None:
        details = {"in": "cases", "words": query.search_words, **query.filters}
        await audit.record_read(session, "search.query", details=details)
    # `cf.<name>=` and `sort=cf.<name>`: resolved against the firm's definitions.
    spec, conditions, narrowed = await custom_fields.for_list(session, "case", Case.id, CASE_LIST, query)
    return await fetch_page(
        session,
        spec,
        query,
        conditions=[visible_to(principal), *conditions],
        match_once=bool(conditions),
        # A filter's matches in the default order come from its value index: who may see them,
        # the same rule as visible_to, on their case ids.
        narrowed=narrowed.also(visible_ids(principal, narrowed.id)) if narrowed else None,
    )


async def check_projection(session: AsyncSession, fields: Projection | None) -> None:
    """`fields=custom_fields{a,b}`: 422 unless each is a case field."""
    await custom_fields.check_fields(session, "case", fields)


async def newest_cases(session: AsyncSession, principal: Principal, limit: int) -> list[Case]:
    """The newest cases the caller may see, without the total `list_cases` counts (the web
    app's "matters opened recently": counting every visible case would cost more than the rows)."""
    query = replace(build_list_query(CASE_LIST, {"sort": "created_at", "order": "desc"}), limit=limit)
    rows, _ = await fetch_next(session, CASE_LIST, query, conditions=[visible_to(principal)])
    return rows


async def record_case_read(session: AsyncSession, case: Case) -> None:
    """A case was read (`GET /cases/{id}`): recorded in the audit trail before the answer."""
    await audit.record_read(session, "case.read", resource_type="case", resource_id=case.id, case_id=case.id)


async def create_case(
    session: AsyncSession,
    actor: Principal,
    body: CaseCreate,
    *,
    default_access: str = "firm",
    template: tuple[str, int] | None = None,
) -> Case:
    """`default_access`: the access of a case whose body names none (the server's setting);
    `template`: the matter template's id and version it is opened from (`templates.service`)."""
    if not body.title:
        problems = [ErrorDetail("title", TITLE_REQUIRED)]
        # Nothing will be inserted, so this read only completes the report; it decides nothing.
        if body.case_number and await repository.case_number_taken(session, body.case_number):
            problems.append(ErrorDetail("case_number", CASE_NUMBER_TAKEN))
        raise ValidationFailed(details=problems)
    now = utcnow()
    access = body.access or default_access
    defs = await custom_fields.definitions(session, "case")
    prepared = await custom_fields.prepare(
        session, defs, None, body.custom_fields, case_type=body.case_type, creating=True
    )
    case = Case(
        id=new_id("case"),
        **body.model_dump(exclude={"case_number", "access", "custom_fields"}),
        custom_fields=prepared.values,
        template_id=template[0] if template else None,
        template_version=template[1] if template else None,
        access=access,
        created_by=actor.actor_id,
        created_at=now,
        updated_at=now,
        assignees=[],
    )
    if body.case_number:
        case.case_number = body.case_number
        if not await repository.insert_case(session, case):
            raise ValidationFailed.on("case_number", CASE_NUMBER_TAKEN)
    else:
        await _insert_with_automatic_number(session, case)
    await custom_fields.store(session, defs, case.id, prepared, case_created_at=case.created_at)
    if access == "restricted" and actor.user_id is not None:
        # Whoever opens a restricted matter can manage it: otherwise they would lose it at once.
        session.add(
            CaseGrant(
                case_id=case.id,
                subject_type="user",
                subject_id=actor.user_id,
                level="manage",
                granted_by=actor.actor_id,
                granted_at=now,
            )
        )
    await emit(session, "case.created", payloads.case_created(case))
    # A client name makes a client party (docs/api-conventions.md#parties): a found or new contact.
    await contacts_service.link_client(session, actor, case)
    return case


async def _insert_with_automatic_number(session: AsyncSession, case: Case) -> None:
    # The counter never repeats a number, but someone may have typed that number by hand: then
    # take the next one.
    for _ in range(AUTO_NUMBER_ATTEMPTS):
        case.case_number = await repository.next_case_number(session, case.created_at.year)
        if await repository.insert_case(session, case):
            return
    raise ValidationFailed.on("case_number", "Could not assign a case number; give one explicitly")


async def update_case(session: AsyncSession, actor: Principal, case: Case, body: CaseUpdate) -> Case:
    values = body.model_dump(exclude_unset=True)
    given_fields = values.pop("custom_fields", None)
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
    if "status" in changes:
        old, new = changes["status"]["from"], changes["status"]["to"]
        if new not in TRANSITIONS[old]:
            allowed = ", ".join(sorted(TRANSITIONS[old]))
            raise InvalidStatusTransition(
                f"A case cannot move from {old} to {new}; from {old} it can move to {allowed}"
            )
    prepared = await _custom_field_changes(session, case, changes, given_fields)
    if not changes and (prepared is None or not prepared[1].changes):
        return case  # a no-op update changes nothing and emits nothing
    for name, change in changes.items():
        setattr(case, name, change["to"])
    if prepared is not None:
        defs, fields = prepared
        case.custom_fields = fields.values
        await custom_fields.store(session, defs, case.id, fields, case_created_at=case.created_at)
        changes.update({f"custom_fields.{n}": change for n, change in fields.changes.items()})
    case.updated_at = utcnow()
    await _flush_checking_number(session, case)
    await emit(session, "case.updated", payloads.case_updated(case, changes, actor.actor_id))
    if "status" in changes:
        await emit(
            session,
            "case.status_changed",
            payloads.case_status_changed(
                case, changes["status"]["from"], changes["status"]["to"], actor.actor_id
            ),
        )
    return case


async def _custom_field_changes(
    session: AsyncSession, case: Case, changes: dict[str, dict[str, Any]], given: dict[str, Any] | None
) -> tuple[custom_fields.Definitions, custom_fields.Prepared] | None:
    """The custom fields' new values (when given), and the fields a status move needs filled in
    (`required_for_statuses`): 422 naming each. None when neither applies (nothing is read)."""
    if given is None and "status" not in changes:
        return None
    defs = await custom_fields.definitions(session, "case")
    case_type = changes["case_type"]["to"] if "case_type" in changes else case.case_type
    prepared = await custom_fields.prepare(
        session, defs, case.custom_fields, given, case_type=case_type, creating=False
    )
    if "status" in changes:
        custom_fields.missing_for_status(defs, prepared.values, case_type, changes["status"]["to"])
    return defs, prepared


async def delete_case(session: AsyncSession, actor: Principal, case: Case) -> None:
    """Move the case to the trash with its documents (docs/api-conventions.md#trash): hidden
    everywhere, content kept until purged. Not while a legal hold is active."""
    await ensure_no_hold(session, case.id, "deleting the case")
    now = utcnow()
    documents = await documents_service.documents_of_case(session, case.id)
    await documents_service.trash_documents(session, actor, documents, at=now, with_case=True)
    case.deleted_at = now
    case.deleted_by = actor.actor_id
    await session.flush()
    await emit(session, "case.deleted", payloads.case_deleted(case, actor.actor_id))


async def _check_may_assign(session: AsyncSession, actor: Principal, case: Case) -> None:
    """On a restricted case an assignee is let in with `manage`: choosing who that is needs
    `manage` (on a `firm` case, `write`, which the caller was checked for)."""
    if case.access == "restricted":
        await require_level(session, actor, case, Level.MANAGE)


async def add_assignee(session: AsyncSession, actor: Principal, case: Case, user_id: str) -> Case:
    await _check_may_assign(session, actor, case)
    user = await session.get(User, user_id)
    if user is None:
        raise NotFound.referenced([ErrorDetail("user_id", "User not found")])
    if user_id in case.assigned_to:
        return case  # already assigned: nothing changes, nothing is emitted
    case.assignees.append(
        CaseAssignee(user_id=user_id, user=user, assigned_by=actor.actor_id, assigned_at=utcnow())
    )
    case.updated_at = utcnow()
    await session.flush()
    await emit(session, "case.assigned", payloads.case_assigned(case, user_id, actor.actor_id))
    return case


async def remove_assignee(session: AsyncSession, actor: Principal, case: Case, user_id: str) -> Case:
    await _check_may_assign(session, actor, case)
    before = case.assigned_to
    if user_id not in before:
        raise NotFound("That user is not assigned to this case")
    case.assignees = [a for a in case.assignees if a.user_id != user_id]
    case.updated_at = utcnow()
    await session.flush()
    changes = {"assigned_to": {"from": before, "to": case.assigned_to}}
    await emit(session, "case.updated", payloads.case_updated(case, changes, actor.actor_id))
    return case


async def read_case_access(session: AsyncSession, case: Case) -> dict[str, Any]:
    """`GET /cases/{id}/access`: the settings, recorded as read (who may see the matter is the
    matter's business)."""
    settings = await case_access(session, case)
    await audit.record_read(
        session, "access.read", resource_type="case", resource_id=case.id, case_id=case.id
    )
    return settings


async def case_access(session: AsyncSession, case: Case) -> dict[str, Any]:
    """The access settings of a case: its mode, its grants and its walls."""
    grants = await session.scalars(
        select(CaseGrant)
        .where(CaseGrant.case_id == case.id)
        .order_by(CaseGrant.subject_type, CaseGrant.subject_id)
    )
    walls = await session.scalars(
        select(CaseWall)
        .where(CaseWall.case_id == case.id)
        .order_by(CaseWall.subject_type, CaseWall.subject_id)
    )
    return {
        "access": case.access,
        "grants": [
            {"subject_type": g.subject_type, "subject_id": g.subject_id, "level": g.level} for g in grants
        ],
        "walls": [
            {"subject_type": w.subject_type, "subject_id": w.subject_id, "reason": w.reason} for w in walls
        ],
    }


async def set_case_access(
    session: AsyncSession, actor: Principal, case: Case, body: CaseAccessBody
) -> dict[str, Any]:
    """Replace the mode, the grants and the walls. Every subject must exist, and appear once in
    each list. Emits `case.access_changed` with the settings before and after."""
    await _check_subjects(session, body)
    before = await case_access(session, case)
    await session.execute(delete(CaseGrant).where(CaseGrant.case_id == case.id))
    await session.execute(delete(CaseWall).where(CaseWall.case_id == case.id))
    now = utcnow()
    session.add_all(
        CaseGrant(
            case_id=case.id,
            subject_type=g.subject_type,
            subject_id=g.subject_id,
            level=g.level,
            granted_by=actor.actor_id,
            granted_at=now,
        )
        for g in body.grants
    )
    session.add_all(
        CaseWall(
            case_id=case.id,
            subject_type=w.subject_type,
            subject_id=w.subject_id,
            reason=w.reason,
            created_by=actor.actor_id,
            created_at=now,
        )
        for w in body.walls
    )
    case.access = body.access
    case.updated_at = now
    await session.flush()
    after = await case_access(session, case)
    if after != before:
        await emit(
            session, "case.access_changed", payloads.case_access_changed(case, before, after, actor.actor_id)
        )
    return after


async def _check_subjects(session: AsyncSession, body: CaseAccessBody) -> None:
    """Every subject exists, and appears once in its list."""
    lists: list[tuple[str, Sequence[AccessEntry]]] = [("grants", body.grants), ("walls", body.walls)]
    wanted: dict[str, set[str]] = {"user": set(), "group": set()}
    for _, entries in lists:
        for entry in entries:
            wanted[entry.subject_type].add(entry.subject_id)
    known = {
        "user": await _existing(session, User.id, wanted["user"]),
        "group": await _existing(session, Group.id, wanted["group"]),
    }
    problems: list[ErrorDetail] = []
    missing: list[ErrorDetail] = []
    for list_name, entries in lists:
        seen: set[tuple[str, str]] = set()
        for index, entry in enumerate(entries):
            key = (entry.subject_type, entry.subject_id)
            if key in seen:
                problems.append(ErrorDetail(f"{list_name}[{index}]", "This subject is listed twice"))
            seen.add(key)
            if entry.subject_id not in known[entry.subject_type]:
                missing.append(
                    ErrorDetail(f"{list_name}[{index}].subject_id", f"No such {entry.subject_type}")
                )
    if problems:
        raise ValidationFailed(details=problems)
    if missing:
        raise NotFound.referenced(missing)


async def _existing(session: AsyncSession, id_column: InstrumentedAttribute[str], ids: set[str]) -> set[str]:
    if not ids:
        return set()
    return set(await session.scalars(select(id_column).where(id_column.in_(sorted(ids)))))
