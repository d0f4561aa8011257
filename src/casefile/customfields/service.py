"""Custom field values on a case or contact: validated against the definitions that apply to
it (422 naming `custom_fields.<name>`), defaults on creation, required fields (always, or before
a case moves to a status), the value index kept with the record, and the `cf.<name>` filters,
sorts and projections of a list."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from casefile.customfields import repository
from casefile.customfields.values import BadValue, Indexed, Wanted, coerce, filter_value
from casefile.errors import ErrorDetail, NotFound, ValidationFailed
from casefile.listing import ListQuery, ListSpec, Narrowed, Projection
from casefile.models import CustomField, CustomFieldSet

MAX_VALUES_PER_RECORD = 200
PREFIX = "cf."


@dataclass(frozen=True)
class Definitions:
    """The fields and field sets of one entity, read once per request that needs them."""

    entity: str
    fields: dict[str, CustomField]
    sets: dict[str, CustomFieldSet]

    def applies(self, field: CustomField, case_type: str | None) -> bool:
        """A field applies to every record unless its set names case types (then to cases of one
        of them, ignoring case)."""
        field_set = self.sets.get(field.field_set_id or "")
        if field_set is None or not field_set.case_types:
            return True
        return case_type is not None and case_type.lower() in field_set.case_types

    def named(self, name: str, where: str, *, reference: bool = False) -> CustomField:
        """The field called `name`; else 422 where the name is a query's word (`sort=cf.x`), 404
        where a body names the field (a reference, docs/api-conventions.md#references)."""
        field = self.fields.get(name)
        if field is None:
            detail = ErrorDetail(where, f"No {self.entity} custom field named {name!r}")
            raise NotFound.referenced([detail]) if reference else ValidationFailed(details=[detail])
        return field


async def definitions(session: AsyncSession, entity: str) -> Definitions:
    fields = await repository.fields_of(session, entity)
    sets = await repository.sets_of(session, entity) if any(f.field_set_id for f in fields) else []
    return Definitions(entity, {f.name: f for f in fields}, {s.id: s for s in sets})


def shown(values: dict[str, Any] | None) -> dict[str, Any]:
    return dict(values or {})


@dataclass(frozen=True)
class Prepared:
    """Validated values of one record: all of them, the changes, and the index rows of each
    changed field (by field id), written by `store` once the record exists."""

    values: dict[str, Any]
    changes: dict[str, dict[str, Any]]
    rows: dict[str, list[Indexed]]


async def prepare(
    session: AsyncSession,
    defs: Definitions,
    current: dict[str, Any] | None,
    given: dict[str, Any] | None,
    *,
    case_type: str | None,
    creating: bool,
) -> Prepared:
    """The record's new values: given ones validated, defaults on creation, null removes a value.
    422 naming `custom_fields.<name>` for each problem; where the values are right, 404 naming each
    field that does not exist or contact or user that a value names and does not exist
    (docs/api-conventions.md#references)."""
    given = given or {}
    values = shown(current)
    problems: list[ErrorDetail] = []
    missing: list[ErrorDetail] = []
    if len(given) > MAX_VALUES_PER_RECORD:
        raise ValidationFailed.on("custom_fields", f"At most {MAX_VALUES_PER_RECORD} fields")
    wanted: dict[str, Any] = {}
    for name, raw in given.items():
        field = defs.fields.get(name)
        if field is None:
            missing.append(
                ErrorDetail(f"custom_fields.{name}", f"No {defs.entity} custom field named {name!r}")
            )
        elif not defs.applies(field, case_type):
            problems.append(ErrorDetail(f"custom_fields.{name}", f"Not a field of case type {case_type!r}"))
        else:
            wanted[name] = raw
    if creating:
        for name, field in defs.fields.items():
            if name not in wanted and field.default is not None and defs.applies(field, case_type):
                wanted[name] = field.default
    rows: dict[str, list[Indexed]] = {}
    ids: dict[str, set[str]] = {"contact": set(), "user": set()}
    for name, raw in wanted.items():
        field = defs.fields[name]
        if raw is None:
            values.pop(name, None)
            rows[field.id] = []
            continue
        try:
            value, indexed = coerce(field, raw)
        except BadValue as exc:
            problems.append(ErrorDetail(f"custom_fields.{name}", str(exc)))
            continue
        if field.field_type in ids:
            ids[field.field_type].add(value)
        values[name] = value
        rows[field.id] = indexed
    for kind, wanted_ids in ids.items():
        absent = wanted_ids - await repository.existing_ids(session, kind, wanted_ids)
        missing += [
            ErrorDetail(f"custom_fields.{name}", f"No {kind} with this id")
            for name in wanted
            if defs.fields[name].field_type == kind and values.get(name) in absent
        ]
    for name, field in defs.fields.items():
        required_now = creating or name in wanted
        if field.required and required_now and values.get(name) is None and defs.applies(field, case_type):
            problems.append(ErrorDetail(f"custom_fields.{name}", f"{field.label} is required"))
    if problems:
        raise ValidationFailed(details=problems)
    if missing:
        raise NotFound.referenced(missing)
    before = shown(current)
    changes = {
        name: {"from": before.get(name), "to": values.get(name)}
        for name in wanted
        if before.get(name) != values.get(name)
    }
    return Prepared(values, changes, {defs.fields[n].id: rows[defs.fields[n].id] for n in changes})


async def store(
    session: AsyncSession,
    defs: Definitions,
    record_id: str,
    prepared: Prepared,
    *,
    case_created_at: datetime | None,
) -> None:
    """Write the value index of the changed fields (the record's JSON is the caller's to set).
    `case_created_at`: a case's created_at, kept beside each of its values (None for a contact)."""
    await repository.replace_values(session, defs.entity, record_id, prepared.rows, case_created_at)


def missing_for_status(
    defs: Definitions, values: dict[str, Any] | None, case_type: str | None, status: str
) -> None:
    """422 naming every field that must have a value before a case moves to `status`."""
    current = values or {}
    problems = [
        ErrorDetail(f"custom_fields.{name}", f"{field.label} is required before moving to {status}")
        for name, field in defs.fields.items()
        if status in field.required_for_statuses
        and current.get(name) is None
        and defs.applies(field, case_type)
    ]
    if problems:
        raise ValidationFailed(details=problems)


def _resolved(defs: Definitions, filters: dict[str, list[str]]) -> list[tuple[CustomField, list[Wanted]]]:
    """Each `cf.<name>=` filter's field and values (a comma-separated value: any of them); 422
    naming each that is not a field or whose value the field does not take."""
    resolved: list[tuple[CustomField, list[Wanted]]] = []
    problems: list[ErrorDetail] = []
    for name, raws in filters.items():
        where = f"{PREFIX}{name}"
        field = defs.fields.get(name)
        if field is None:
            problems.append(ErrorDetail(where, f"No {defs.entity} custom field named {name!r}"))
            continue
        try:
            resolved.append((field, [filter_value(field, raw) for raw in raws]))
        except BadValue as exc:
            problems.append(ErrorDetail(where, str(exc)))
    if problems:
        raise ValidationFailed(details=problems)
    return resolved


def _narrowed(entity: str, resolved: list[tuple[CustomField, list[Wanted]]]) -> Narrowed | None:
    """A case list's matches read from the value index of its first filter that can stand for the
    cases (repository.narrowed), None when none can (or the list is not of cases)."""
    if entity != "case":
        return None
    for index, (field, wanted) in enumerate(resolved):
        if repository.drives(field, wanted):
            return repository.narrowed(field, wanted, resolved[:index] + resolved[index + 1 :])
    return None


def sort_key(defs: Definitions, record: InstrumentedAttribute[str], sort: str) -> ColumnElement[Any]:
    field = defs.named(sort.removeprefix(PREFIX), "sort")
    if field.field_type == "long_text":
        raise ValidationFailed.on("sort", "Long text is not sortable")
    return repository.sort_key(defs.entity, record, field)


def check_projection(defs: Definitions, names: Sequence[str] | None) -> None:
    """`fields=custom_fields{a,b}`: each name a field of the entity."""
    unknown = [n for n in names or () if n not in defs.fields]
    if unknown:
        listed = ", ".join(f"custom_fields.{n}" for n in unknown)
        raise ValidationFailed.on("fields", f"Unknown field(s): {listed}")


async def for_list(
    session: AsyncSession, entity: str, record: InstrumentedAttribute[str], spec: ListSpec, query: ListQuery
) -> tuple[ListSpec, list[ColumnElement[bool]], Narrowed | None]:
    """A list's `cf.<name>=` conditions, its spec with `sort=cf.<name>` as a sort key (resolved
    against the definitions: nothing is read when the list asks for neither), and for a filtered
    case list the value index its matches can be read from in its default order (listing.Narrowed;
    the caller adds who may see them)."""
    if not query.custom_filters and query.sort in spec.sortable:
        return spec, [], None
    defs = await definitions(session, entity)
    resolved = _resolved(defs, query.custom_filters)
    conditions = [repository.having_value(entity, record, field, wanted) for field, wanted in resolved]
    if query.sort not in spec.sortable:
        spec = replace(spec, sortable={query.sort: sort_key(defs, record, query.sort)})
    return spec, conditions, _narrowed(entity, resolved)


async def check_fields(session: AsyncSession, entity: str, fields: Projection | None) -> None:
    """`fields=custom_fields{a,b}`: 422 unless each is a field of `entity`."""
    names = (fields or {}).get("custom_fields")
    if names:
        check_projection(await definitions(session, entity), names)


searched = repository.searched
searched_ids = repository.searched_ids
any_searched = repository.any_searched
