"""Defining custom fields and field sets (administrators), and reading the definitions."""

from __future__ import annotations

from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.auth.permissions import Principal
from casefile.clock import utcnow
from casefile.customfields.schemas import (
    CASE_STATUSES,
    FieldCreate,
    FieldDefinition,
    FieldOut,
    FieldSetCreate,
    FieldSetOut,
    FieldSetUpdate,
    FieldUpdate,
)
from casefile.customfields.values import BadValue, coerce
from casefile.db import get_or_404
from casefile.errors import Conflict, ErrorDetail, NotFound, ValidationFailed
from casefile.events import payloads
from casefile.events.outbox import emit
from casefile.models import CustomField, CustomFieldSet

# The statuses of a case (cases.schemas.STATUSES: cases sit above this domain).
CHOICE_TYPES = ("single_choice", "multiple_choice")


async def create_field_set(session: AsyncSession, actor: Principal, body: FieldSetCreate) -> CustomFieldSet:
    if body.entity != "case" and body.case_types:
        raise ValidationFailed.on("case_types", "Only sets of case fields apply per case type")
    now = utcnow()
    field_set = CustomFieldSet(**body.model_dump(), created_by=actor.actor_id, created_at=now, updated_at=now)
    session.add(field_set)
    await session.flush()
    await emit(
        session,
        "custom_field_set.created",
        payloads.custom_field_set(FieldSetOut.dump(field_set), None, actor.actor_id),
    )
    return field_set


async def update_field_set(
    session: AsyncSession, actor: Principal, field_set: CustomFieldSet, body: FieldSetUpdate
) -> CustomFieldSet:
    values = body.model_dump(exclude_unset=True)
    if field_set.entity != "case" and values.get("case_types"):
        raise ValidationFailed.on("case_types", "Only sets of case fields apply per case type")
    for name in ("name", "case_types", "position"):
        if name in values and values[name] is None:
            raise ValidationFailed.on(name, f"{name} cannot be null")
    changes = _changes(field_set, values)
    if changes:
        for name, change in changes.items():
            setattr(field_set, name, change["to"])
        field_set.updated_at = utcnow()
        await session.flush()
        data = payloads.custom_field_set(FieldSetOut.dump(field_set), changes, actor.actor_id)
        await emit(session, "custom_field_set.updated", data)
    return field_set


def _changes(row: Any, values: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {n: {"from": getattr(row, n), "to": v} for n, v in values.items() if getattr(row, n) != v}


async def _check_definition(
    session: AsyncSession, entity: str, field_type: str, values: dict[str, Any], current: CustomField | None
) -> None:
    """The parts of a definition that depend on each other: choices for a choice type only (and
    at least one), statuses of a case, a default the field itself accepts, an existing set."""
    problems: list[ErrorDetail] = []
    choices = values.get("choices", current.choices if current else [])
    if field_type in CHOICE_TYPES and not choices:
        problems.append(ErrorDetail("choices", "A choice field needs at least one choice"))
    if field_type not in CHOICE_TYPES and choices:
        problems.append(ErrorDetail("choices", "Only choice fields have choices"))
    statuses = values.get("required_for_statuses") or []
    if statuses and entity != "case":
        problems.append(ErrorDetail("required_for_statuses", "Only case fields are required per status"))
    elif any(s not in CASE_STATUSES for s in statuses):
        problems.append(
            ErrorDetail("required_for_statuses", f"Each status must be one of: {', '.join(CASE_STATUSES)}")
        )
    default = values.get("default")
    if default is not None:
        probe = CustomField(field_type=field_type, choices=choices or [])
        try:
            coerce(probe, default)
        except BadValue as exc:
            problems.append(ErrorDetail("default", str(exc)))
        if field_type in ("contact", "user"):
            problems.append(ErrorDetail("default", "A contact or user field has no default"))
    if problems:
        raise ValidationFailed(details=problems)
    set_id = values.get("field_set_id")
    if set_id is not None:
        field_set = await session.get(CustomFieldSet, set_id)
        if field_set is None or field_set.entity != entity:
            detail = ErrorDetail("field_set_id", f"No field set of {entity} fields with this id")
            raise NotFound.referenced([detail])


def _definition_values(body: FieldDefinition, *, creating: bool) -> dict[str, Any]:
    values = body.model_dump(exclude_unset=not creating)
    for name in ("label", "required", "required_for_statuses", "choices", "position"):
        if name in values and values[name] is None:
            if creating:
                values.pop(name)
            else:
                raise ValidationFailed.on(name, f"{name} cannot be null")
    if "required_for_statuses" in values:
        values["required_for_statuses"] = list(dict.fromkeys(values["required_for_statuses"]))
    return values


async def create_field(session: AsyncSession, actor: Principal, body: FieldCreate) -> CustomField:
    """A new field. Its name is unique among the entity's fields (409 otherwise) and never changes."""
    values = _definition_values(body, creating=True)
    await _check_definition(session, body.entity, body.field_type, values, None)
    now = utcnow()
    field = CustomField(
        **{"required": False, "required_for_statuses": [], "choices": [], "position": 0, **values},
        created_by=actor.actor_id,
        created_at=now,
        updated_at=now,
    )
    try:
        async with session.begin_nested():
            session.add(field)
            await session.flush()
    except IntegrityError as exc:
        raise Conflict(f"A {body.entity} field named {body.name!r} exists already") from exc
    await emit(
        session, "custom_field.created", payloads.custom_field(FieldOut.dump(field), None, actor.actor_id)
    )
    return field


async def update_field(
    session: AsyncSession, actor: Principal, field: CustomField, body: FieldUpdate
) -> CustomField:
    """Change a definition (not its name, type or entity). Values already stored stay as they
    are: a choice removed, or a field made required, applies to values written from now on."""
    values = _definition_values(body, creating=False)
    await _check_definition(session, field.entity, field.field_type, values, field)
    changes = _changes(field, values)
    if changes:
        for name, change in changes.items():
            setattr(field, name, change["to"])
        field.updated_at = utcnow()
        await session.flush()
        await emit(
            session,
            "custom_field.updated",
            payloads.custom_field(FieldOut.dump(field), changes, actor.actor_id),
        )
    return field


async def get_field(session: AsyncSession, field_id: str) -> CustomField:
    return await get_or_404(session, CustomField, field_id, "Custom field not found")


async def get_field_set(session: AsyncSession, set_id: str) -> CustomFieldSet:
    return await get_or_404(session, CustomFieldSet, set_id, "Field set not found")
