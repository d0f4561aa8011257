"""Matter templates: versions stored as data, and opening a case from one. Everything a template
implies (the case with its fields, custom fields and tags, its parties, its saved deadlines and
their tasks, its own tasks) is made by the domains' own services in the request's one
transaction, each emitting its events: all of it commits, or none."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.auth.permissions import Principal
from casefile.cases import service as cases
from casefile.cases.schemas import CaseCreate
from casefile.clock import utcnow
from casefile.contacts import service as contacts
from casefile.contacts.schemas import PartyCreate
from casefile.deadlines import service as deadlines
from casefile.deadlines.schemas import ComputeRequest
from casefile.documents import service as documents
from casefile.errors import Conflict, ErrorDetail, NotFound, ValidationFailed
from casefile.models import Case, Contact, Document, MatterTemplate, User
from casefile.runtime import Runtime
from casefile.tasks import service as tasks
from casefile.tasks.schemas import TaskCreate
from casefile.templates.schemas import CaseOpen, TemplateBody, TemplateCreate


async def _latest(session: AsyncSession, template_id: str) -> MatterTemplate | None:
    return await session.scalar(
        select(MatterTemplate)
        .where(MatterTemplate.id == template_id)
        .order_by(MatterTemplate.version.desc())
        .limit(1)
    )


async def list_templates(session: AsyncSession) -> list[MatterTemplate]:
    """The latest version of each template, by id."""
    latest = (
        select(MatterTemplate.id, func.max(MatterTemplate.version).label("version"))
        .group_by(MatterTemplate.id)
        .subquery()
    )
    rows = await session.scalars(
        select(MatterTemplate)
        .join(latest, (MatterTemplate.id == latest.c.id) & (MatterTemplate.version == latest.c.version))
        .order_by(MatterTemplate.id)
    )
    return list(rows)


async def get_template(session: AsyncSession, template_id: str, version: int | None = None) -> MatterTemplate:
    if version is None:
        found = await _latest(session, template_id)
    else:
        found = await session.get(MatterTemplate, (template_id, version))
    if found is None:
        raise NotFound("Matter template not found" if version is None else "No such version of this template")
    return found


async def _check(session: AsyncSession, body: TemplateBody) -> None:
    """What a template names exists now: its contacts, users and rule-set triggers (a case opened
    later is checked again by the services that make it)."""
    problems: list[ErrorDetail] = []
    missing: list[ErrorDetail] = []  # references to nothing: 404 (docs/api-conventions.md#references)
    for i, party in enumerate(body.parties):
        if await session.get(Contact, party.contact_id) is None:
            missing.append(ErrorDetail(f"parties[{i}].contact_id", "Contact not found"))
    for i, task in enumerate(body.tasks):
        if task.assignee not in (None, "creator") and await session.get(User, task.assignee) is None:
            missing.append(ErrorDetail(f"tasks[{i}].assignee", "User not found"))
    for i, document_id in enumerate(body.documents):
        document = await session.get(Document, document_id)
        if document is None or document.deleted_at is not None:
            missing.append(ErrorDetail(f"documents[{i}]", "Document not found"))
    for i, deadline in enumerate(body.deadlines):
        rule_set = await deadlines.find_rule_set(session, deadline.rule_set)
        if rule_set is None:
            missing.append(ErrorDetail(f"deadlines[{i}].rule_set", f"Unknown rule set {deadline.rule_set!r}"))
        elif deadline.trigger not in rule_set.triggers:
            problems.append(
                ErrorDetail(f"deadlines[{i}].trigger", f"No trigger {deadline.trigger!r} in that rule set")
            )
    if problems:
        raise ValidationFailed(details=problems)
    if missing:
        raise NotFound.referenced(missing)


async def _add_version(
    session: AsyncSession, actor: Principal, template_id: str, version: int, body: TemplateBody
) -> MatterTemplate:
    await _check(session, body)
    definition = TemplateBody.model_validate(body.model_dump(exclude={"id"})).model_dump(mode="json")
    row = MatterTemplate(
        id=template_id, version=version, definition=definition, created_by=actor.actor_id, created_at=utcnow()
    )
    try:
        async with session.begin_nested():
            session.add(row)
            await session.flush()
    except IntegrityError as exc:
        raise Conflict(f"Version {version} of {template_id!r} was just made; read it and try again") from exc
    return row


async def create_template(session: AsyncSession, actor: Principal, body: TemplateCreate) -> MatterTemplate:
    if await _latest(session, body.id) is not None:
        raise Conflict(f"A template {body.id!r} exists already: PUT a new version of it")
    return await _add_version(session, actor, body.id, 1, body)


async def new_version(
    session: AsyncSession, actor: Principal, template: MatterTemplate, body: TemplateBody
) -> MatterTemplate:
    """The template's next version; cases opened from earlier ones keep what they were given."""
    return await _add_version(session, actor, template.id, template.version + 1, body)


def _case_body(body: CaseOpen, template: TemplateBody) -> CaseCreate:
    """The request's fields, and the template's where the request gives none."""
    given = body.model_fields_set
    values: dict[str, Any] = body.model_dump(
        exclude={"template_id", "template_version", "trigger_dates", "custom_fields", "tags"}
    )
    for name, value in template.defaults.model_dump(exclude_none=True).items():
        if name not in given:
            values[name] = value
    if "case_type" not in given and template.case_type is not None:
        values["case_type"] = template.case_type
    values["custom_fields"] = {**template.custom_fields, **(body.custom_fields or {})}
    values["tags"] = list(dict.fromkeys([*template.tags, *(body.tags or [])]))
    return CaseCreate.model_validate(values)


def _trigger_dates(body: CaseOpen, template: TemplateBody, opened: date) -> dict[str, date]:
    dates: dict[str, date] = {}
    problems = []
    for deadline in template.deadlines:
        if deadline.on_opening:
            dates[deadline.trigger] = body.trigger_dates.get(deadline.trigger, opened)
        elif deadline.trigger in body.trigger_dates:
            dates[deadline.trigger] = body.trigger_dates[deadline.trigger]
        else:
            problems.append(
                ErrorDetail(f"trigger_dates.{deadline.trigger}", "The template needs this trigger's date")
            )
    unknown = set(body.trigger_dates) - {d.trigger for d in template.deadlines}
    problems += [ErrorDetail(f"trigger_dates.{t}", "Not a trigger of the template") for t in sorted(unknown)]
    if problems:
        raise ValidationFailed(details=problems)
    return dates


async def open_case(session: AsyncSession, runtime: Runtime, actor: Principal, body: CaseOpen) -> Case:
    """`POST /cases`: a plain case, or one with everything its template implies."""
    if body.template_id is None:
        if body.template_version is not None or body.trigger_dates:
            raise ValidationFailed.on("template_id", "template_version and trigger_dates need a template_id")
        plain = CaseCreate.model_validate(
            body.model_dump(exclude={"template_id", "template_version", "trigger_dates"})
        )
        return await cases.create_case(
            session, actor, plain, default_access=runtime.settings.default_case_access
        )
    try:
        row = await get_template(session, body.template_id, body.template_version)
    except NotFound as exc:
        raise NotFound.referenced([ErrorDetail("template_id", exc.message)]) from None
    template = TemplateBody.model_validate(row.definition)
    opened = utcnow().date()
    dates = _trigger_dates(body, template, opened)
    case = await cases.create_case(
        session,
        actor,
        _case_body(body, template),
        default_access=runtime.settings.default_case_access,
        template=(row.id, row.version),
    )
    for document_id in template.documents:
        source = await session.get(Document, document_id)
        if source is None or source.deleted_at is not None:  # gone since the template was saved
            raise ValidationFailed.on(
                "template_id", f"The template's document {document_id} no longer exists"
            )
        await documents.copy_document(session, runtime, actor, source, case)
    for party in template.parties:
        await contacts.add_party(
            session, actor, case, PartyCreate(contact_id=party.contact_id, role=party.role)
        )
    assignee = actor.user_id
    for deadline in template.deadlines:
        request = ComputeRequest(
            rule_set=deadline.rule_set,
            trigger=deadline.trigger,
            trigger_date=dates[deadline.trigger],
            save=True,
            assignee_id=assignee,
        )
        await deadlines.compute_for_case(session, actor, case, request)
    for task in template.tasks:
        start = opened if task.relative_to == "opening" else dates[task.trigger or ""]
        due = None if task.due_in_days is None else start + timedelta(days=task.due_in_days)
        await tasks.create_task(
            session,
            actor,
            case,
            TaskCreate(
                title=task.title,
                description=task.description,
                priority=task.priority,
                due_at=None if due is None else due.isoformat(),
                assignee_id=assignee if task.assignee == "creator" else task.assignee,
            ),
        )
    return case
