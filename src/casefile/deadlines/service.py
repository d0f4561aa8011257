"""Deadline rules: finding a rule set (shipped file or the firm's own), computing every rule of a
trigger, saving the result as tasks, and moving those tasks when the trigger date changes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.access.holds import ensure_no_hold
from casefile.audit import service as audit
from casefile.auth.permissions import Principal
from casefile.clock import utcnow
from casefile.db import get_or_404
from casefile.deadlines.counting import Computed, CourtCalendar, compute
from casefile.deadlines.repository import DEADLINE_LIST
from casefile.deadlines.rulesets import RuleSetDefinition, shipped_rule_sets
from casefile.deadlines.schemas import (
    ComputedDeadlineOut,
    ComputeOut,
    ComputeRequest,
    RuleSetOut,
    TraceStepOut,
)
from casefile.errors import Conflict, ErrorDetail, NotFound, ValidationFailed
from casefile.events import payloads
from casefile.events.outbox import emit
from casefile.events.schemas import MovedTask
from casefile.listing import ListQuery, Page, fetch_page
from casefile.models import Case, Deadline, DeadlineRuleSet, Task
from casefile.tasks.service import check_assignee, set_due

DEADLINE_PRIORITY = "high"  # a missed court deadline is rarely a small matter


@dataclass(frozen=True)
class Computation:
    """Every rule of one trigger of a rule set, computed from one date."""

    definition: RuleSetDefinition
    trigger: str
    trigger_date: date
    computed: list[Computed]


async def rule_sets(session: AsyncSession) -> list[RuleSetOut]:
    shipped = [RuleSetOut.of(d, "shipped") for d in shipped_rule_sets().values()]
    rows = await session.scalars(select(DeadlineRuleSet).order_by(DeadlineRuleSet.id))
    return shipped + [RuleSetOut.of(RuleSetDefinition.model_validate(r.definition), "firm") for r in rows]


async def find_rule_set(session: AsyncSession, rule_set_id: str) -> RuleSetOut | None:
    shipped = shipped_rule_sets().get(rule_set_id)
    if shipped is not None:
        return RuleSetOut.of(shipped, "shipped")
    row = await session.get(DeadlineRuleSet, rule_set_id)
    return None if row is None else RuleSetOut.of(RuleSetDefinition.model_validate(row.definition), "firm")


async def get_rule_set(session: AsyncSession, rule_set_id: str) -> RuleSetOut:
    found = await find_rule_set(session, rule_set_id)
    if found is None:
        raise NotFound("Rule set not found")
    return found


async def create_rule_set(session: AsyncSession, principal: Principal, body: RuleSetDefinition) -> RuleSetOut:
    """Store a firm's rule set. Ids are never reused: a shipped id or a taken one is 409 (a
    corrected set gets a new id, so what earlier computations used stays readable)."""
    if body.id in shipped_rule_sets():
        raise Conflict(f"{body.id!r} is a rule set shipped with Casefile; choose another id")
    try:
        async with session.begin_nested():
            session.add(
                DeadlineRuleSet(
                    id=body.id,
                    definition=body.model_dump(mode="json"),
                    created_by=principal.actor_id,
                    created_at=utcnow(),
                )
            )
            await session.flush()
    except IntegrityError as exc:
        raise Conflict(f"A rule set {body.id!r} exists already; choose another id") from exc
    return RuleSetOut.of(body, "firm")


def _definition(rule_set: RuleSetOut) -> RuleSetDefinition:
    return RuleSetDefinition.model_validate(rule_set.model_dump(exclude={"origin", "triggers"}))


def compute_trigger(definition: RuleSetDefinition, trigger: str, trigger_date: date) -> Computation:
    """Every rule of `definition` whose trigger is `trigger`, applied to `trigger_date`."""
    rules = [rule for rule in definition.rules if rule.trigger == trigger]
    if not rules:
        known = ", ".join(definition.triggers)
        raise ValidationFailed.on(
            "trigger", f"Rule set {definition.id!r} has no rule for {trigger!r}; its triggers: {known}"
        )
    court = CourtCalendar(definition.calendar)
    try:
        computed = [compute(rule, trigger_date, court) for rule in rules]
    except OverflowError:
        # A count that runs past 9999-12-31 or before 0001-01-01: the date is the caller's to change.
        raise ValidationFailed.on(
            "trigger_date", "The deadlines of this date fall outside the calendar (years 1 to 9999)"
        ) from None
    return Computation(definition, trigger, trigger_date, computed)


def _out(
    computation: Computation, deadline: Deadline | None = None, tasks: dict[str, Task] | None = None
) -> ComputeOut:
    tasks = tasks or {}
    return ComputeOut(
        rule_set=computation.definition.id,
        rule_set_version=computation.definition.version,
        trigger=computation.trigger,
        trigger_date=computation.trigger_date,
        deadline_id=deadline.id if deadline else None,
        deadlines=[
            ComputedDeadlineOut(
                rule_id=c.rule.id,
                title=c.rule.title,
                citation=c.rule.citation,
                days=c.rule.days,
                counting=c.rule.counting,
                direction=c.rule.direction,
                due_on=c.due_on,
                trace=[TraceStepOut(step=t.step, date=t.date, note=t.note) for t in c.trace],
                task_id=tasks[c.rule.id].id if c.rule.id in tasks else None,
            )
            for c in computation.computed
        ],
    )


async def compute_for_case(
    session: AsyncSession, principal: Principal, case: Case, body: ComputeRequest
) -> ComputeOut:
    rule_set = await find_rule_set(session, body.rule_set)
    if rule_set is None:
        raise NotFound.referenced([ErrorDetail("rule_set", f"Unknown rule set {body.rule_set!r}")])
    computation = compute_trigger(_definition(rule_set), body.trigger, body.trigger_date)
    if not body.save:
        return _out(computation)
    assignee_id = body.assignee_id or principal.user_id
    await check_assignee(session, assignee_id)
    return await _save(session, principal, case, computation, assignee_id)


async def _existing(session: AsyncSession, case: Case, rule_set: str, trigger: str) -> Deadline | None:
    return await session.scalar(
        select(Deadline)
        .where(Deadline.case_id == case.id, Deadline.rule_set == rule_set, Deadline.trigger == trigger)
        .with_for_update()
    )


async def _save(
    session: AsyncSession, principal: Principal, case: Case, computation: Computation, assignee_id: str | None
) -> ComputeOut:
    """Save the computation as a deadline with one task per rule, or, when this case already has
    this trigger saved, move it to `trigger_date` (its tasks move with it)."""
    definition, trigger = computation.definition, computation.trigger
    existing = await _existing(session, case, definition.id, trigger)
    if existing is None:
        now = utcnow()
        deadline = Deadline(
            case_id=case.id,
            rule_set=definition.id,
            rule_set_version=definition.version,
            trigger=trigger,
            trigger_date=computation.trigger_date,
            created_by=principal.actor_id,
            created_at=now,
            updated_at=now,
        )
        try:
            async with session.begin_nested():
                session.add(deadline)
                await session.flush()
        except IntegrityError:
            # Saved by a concurrent request between our read and our insert: move that one.
            existing = await _existing(session, case, definition.id, trigger)
            if existing is None:
                raise
        else:
            tasks = [
                await _new_task(session, principal, deadline, c, assignee_id) for c in computation.computed
            ]
            await emit(
                session, "deadline.saved", payloads.deadline_saved(deadline, tasks, principal.actor_id)
            )
            return _out(computation, deadline, {t.rule_id or "": t for t in tasks})
    return await _move(session, principal, existing, computation, assignee_id)


async def _new_task(
    session: AsyncSession, principal: Principal, deadline: Deadline, c: Computed, assignee_id: str | None
) -> Task:
    now = utcnow()
    rule = c.rule
    task = Task(
        case_id=deadline.case_id,
        title=rule.title,
        description=(
            f"{rule.citation}: {rule.days} {rule.counting} days {rule.direction} {rule.trigger}. "
            f"Computed with rule set {deadline.rule_set} version {deadline.rule_set_version}."
        ),
        assignee_id=assignee_id,
        priority=DEADLINE_PRIORITY,
        status="open",
        reminders=[],
        deadline_id=deadline.id,
        rule_id=rule.id,
        created_by=principal.actor_id,
        created_at=now,
        updated_at=now,
    )
    set_due(task, c.due_on)
    session.add(task)
    await session.flush()
    await emit(session, "task.created", payloads.task_created(task))
    return task


async def _move(
    session: AsyncSession,
    principal: Principal,
    deadline: Deadline,
    computation: Computation,
    assignee_id: str | None,
) -> ComputeOut:
    """Recompute with the rule set as it is now and move every task of the deadline to its new
    date (a task whose date was changed by hand is moved too: the computation is the record). A
    rule added to the set since gets its task now; a task whose rule is gone is left alone.
    Not under a legal hold: the deadline and its tasks are part of the held record."""
    await ensure_no_hold(session, deadline.case_id, "moving its deadlines")
    old_date = deadline.trigger_date.isoformat()
    tasks = {
        t.rule_id or "": t
        for t in await session.scalars(select(Task).where(Task.deadline_id == deadline.id).with_for_update())
    }
    moved: list[MovedTask] = []
    now = utcnow()
    for c in computation.computed:
        task = tasks.get(c.rule.id)
        if task is None:
            tasks[c.rule.id] = await _new_task(session, principal, deadline, c, assignee_id)
            continue
        before = task.due_at
        set_due(task, c.due_on)
        if task.due_at != before:
            task.updated_at = now
            moved.append({"task_id": task.id, "rule_id": task.rule_id, "from": before, "to": task.due_at})
            await session.flush()
            changes = {"due_at": {"from": before, "to": task.due_at}}
            await emit(session, "task.updated", payloads.task_updated(task, changes, principal.actor_id))
    version, trigger_date = computation.definition.version, computation.trigger_date
    changed = trigger_date != deadline.trigger_date or version != deadline.rule_set_version
    deadline.trigger_date, deadline.rule_set_version = trigger_date, version
    if changed or moved:
        deadline.updated_at = now
        await session.flush()
        await emit(
            session, "deadline.moved", payloads.deadline_moved(deadline, old_date, moved, principal.actor_id)
        )
    return _out(computation, deadline, tasks)


async def move_deadline(
    session: AsyncSession, principal: Principal, deadline: Deadline, trigger_date: date
) -> ComputeOut:
    rule_set = await find_rule_set(session, deadline.rule_set)
    if rule_set is None:  # a firm rule set is never deleted; a shipped one could leave a release
        raise Conflict(
            f"Rule set {deadline.rule_set!r} no longer exists; these deadlines cannot be recomputed"
        )
    computation = compute_trigger(_definition(rule_set), deadline.trigger, trigger_date)
    return await _move(session, principal, deadline, computation, principal.user_id)


async def deadline_of_case(session: AsyncSession, case: Case, deadline_id: str) -> Deadline:
    deadline = await get_or_404(session, Deadline, deadline_id, "Deadline not found")
    if deadline.case_id != case.id:
        raise NotFound("Deadline not found")
    return deadline


async def delete_deadline(session: AsyncSession, principal: Principal, deadline: Deadline) -> list[str]:
    """Remove a saved deadline with its open tasks; tasks already done or cancelled stay on the
    case as its history (unlinked). Returns the ids of the tasks deleted."""
    await ensure_no_hold(session, deadline.case_id, "deleting its deadlines")
    open_tasks = list(
        await session.scalars(
            select(Task).where(Task.deadline_id == deadline.id, Task.status == "open").with_for_update()
        )
    )
    for task in open_tasks:
        await emit(session, "task.deleted", payloads.task_deleted(task, principal.actor_id))
        await session.delete(task)
    deleted = [t.id for t in open_tasks]
    await emit(session, "deadline.deleted", payloads.deadline_deleted(deadline, deleted, principal.actor_id))
    await session.delete(deadline)
    await session.flush()
    return deleted


async def list_deadlines(session: AsyncSession, case: Case, query: ListQuery) -> Page[Deadline]:
    page = await fetch_page(session, DEADLINE_LIST, query, conditions=[Deadline.case_id == case.id])
    await audit.record_read(
        session, "deadline.list", resource_type="case", resource_id=case.id, case_id=case.id
    )
    return page


async def read_deadline(session: AsyncSession, case: Case, deadline_id: str) -> Deadline:
    """`GET /cases/{id}/deadlines/{id}`: the deadline, recorded as read."""
    deadline = await deadline_of_case(session, case, deadline_id)
    await audit.record_read(
        session, "deadline.read", resource_type="deadline", resource_id=deadline.id, case_id=case.id
    )
    return deadline


async def saved_computation(session: AsyncSession, deadline: Deadline) -> ComputeOut | None:
    """A saved deadline's calculation, each rule with its trace, as its rule set counts it now
    (`rule_set_version` says which version saved it); None if the rule set or trigger is gone.
    A matter's export carries it (`casefile.exports`)."""
    rule_set = await find_rule_set(session, deadline.rule_set)
    if rule_set is None:
        return None
    try:
        computation = compute_trigger(_definition(rule_set), deadline.trigger, deadline.trigger_date)
    except ValidationFailed:
        return None
    tasks = {
        t.rule_id or "": t for t in await session.scalars(select(Task).where(Task.deadline_id == deadline.id))
    }
    return _out(computation, deadline, tasks)
