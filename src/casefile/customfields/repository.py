"""Custom field queries: the definitions, the value index's rows, and the conditions and sort
keys of `cf.<name>` in a list (each answered by the index on (field_id, value_*, case_created_at,
case_id))."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, delete, func, insert, or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute, aliased

from casefile.customfields.values import NUMBER_INDEXED, Indexed, Wanted
from casefile.listing import Narrowed
from casefile.models import Contact, CustomField, CustomFieldSet, CustomFieldValue, User

_V = CustomFieldValue

# The types whose values a search looks in (long text is not indexed; dates, booleans and ids are
# not words).
SEARCHED = ("text", "single_choice", "multiple_choice")


async def fields_of(session: AsyncSession, entity: str) -> Sequence[CustomField]:
    statement = (
        select(CustomField)
        .where(CustomField.entity == entity)
        .order_by(CustomField.position, CustomField.name)
    )
    return (await session.scalars(statement)).all()


async def sets_of(session: AsyncSession, entity: str) -> Sequence[CustomFieldSet]:
    statement = (
        select(CustomFieldSet)
        .where(CustomFieldSet.entity == entity)
        .order_by(CustomFieldSet.position, CustomFieldSet.name, CustomFieldSet.id)
    )
    return (await session.scalars(statement)).all()


def _owner(entity: str) -> InstrumentedAttribute[str | None]:
    return _V.case_id if entity == "case" else _V.contact_id


async def replace_values(
    session: AsyncSession,
    entity: str,
    record_id: str,
    rows: dict[str, list[Indexed]],
    case_created_at: datetime | None,
) -> None:
    """The index rows of the fields in `rows` (by field id) become those given, each with the
    case's created_at (a contact's: None)."""
    if not rows:
        return
    owner = _owner(entity)
    await session.execute(delete(_V).where(owner == record_id, _V.field_id.in_(list(rows))))
    new = [
        {
            "field_id": field_id,
            owner.key: record_id,
            "value_text": r.text,
            "value_number": r.number,
            "case_created_at": case_created_at,
        }
        for field_id, indexed in rows.items()
        for r in indexed
    ]
    if new:
        await session.execute(insert(_V), new)


async def existing_ids(session: AsyncSession, kind: str, ids: set[str]) -> set[str]:
    column = Contact.id if kind == "contact" else User.id
    return set(await session.scalars(select(column).where(column.in_(sorted(ids))))) if ids else set()


def _column(field: CustomField) -> Any:
    return _column_of(_V, field)


def _column_of(values: Any, field: CustomField) -> Any:
    return values.value_number if field.field_type in NUMBER_INDEXED else values.value_text


def _matches(column: Any, wanted: Wanted) -> ColumnElement[bool]:
    if not wanted.ranged:
        return column == wanted.equal  # type: ignore[no-any-return]
    bounds = []
    if wanted.low is not None:
        bounds.append(column >= wanted.low)
    if wanted.high is not None:
        bounds.append(column <= wanted.high)
    return and_(*bounds) if bounds else column.is_not(None)


def having_value(
    entity: str,
    record: InstrumentedAttribute[str] | InstrumentedAttribute[str | None],
    field: CustomField,
    wanted: list[Wanted],
) -> ColumnElement[bool]:
    """Records with a value of `field` matching any of `wanted`: a semi-join the index on
    (field_id, value, case_created_at, case_id) answers alone."""
    column, owner = _column(field), _owner(entity)
    matching = select(owner).where(_V.field_id == field.id, or_(*(_matches(column, w) for w in wanted)))
    return record.in_(matching)


# The value rows a filtered case list reads its matches from (listing.Narrowed): an alias, so that
# the other filters' semi-joins on `custom_field_values` stay subqueries of their own.
_MATCHED = aliased(CustomFieldValue, name="matched_values")


def drives(field: CustomField, wanted: list[Wanted]) -> bool:
    """Whether the rows matching this filter are one per case, so they can stand for the cases:
    a field has one row per case, but a multiple choice one per choice (two wanted choices could
    match twice)."""
    return field.field_type != "multiple_choice" or (len(wanted) == 1 and not wanted[0].ranged)


def narrowed(
    field: CustomField, wanted: list[Wanted], others: Sequence[tuple[CustomField, list[Wanted]]]
) -> Narrowed:
    """A case list's matches read from the value index of one filter (`drives`): each matching
    value row carries its case's id and created_at, the default sort key (ix_custom_field_values_*_created
    answers alone); the other filters are the usual semi-joins on that id. The caller adds who may
    see which case (access.matter.visible_ids)."""
    where = [
        _MATCHED.field_id == field.id,
        or_(*(_matches(_column_of(_MATCHED, field), w) for w in wanted)),
        *(having_value("case", _MATCHED.case_id, f, w) for f, w in others),
    ]
    return Narrowed(id=_MATCHED.case_id, key=_MATCHED.case_created_at, sort="created_at", where=tuple(where))


def sort_key(entity: str, record: InstrumentedAttribute[str], field: CustomField) -> ColumnElement[Any]:
    """The record's (least) value of `field`: NULL, sorted last, when it has none."""
    column, owner = _column(field), _owner(entity)
    return (
        select(func.min(column))
        .where(_V.field_id == field.id, owner == record)
        .scalar_subquery()
        .label(f"cf_{field.name}")
    )


def searched(entity: str, record: InstrumentedAttribute[str], words: list[str]) -> ColumnElement[bool]:
    """Records with one indexed custom-field value (text, choices) holding every word."""
    return record.in_(searched_ids(entity, words))


async def any_searched(session: AsyncSession, entity: str) -> bool:
    """Whether `entity` has a field whose values a search looks in (most firms' searches then
    stay exactly what they were)."""
    statement = select(CustomField.id).where(
        CustomField.entity == entity, CustomField.field_type.in_(SEARCHED)
    )
    return await session.scalar(statement.limit(1)) is not None


def searched_ids(entity: str, words: list[str]) -> Select[Any]:
    """The ids of the records with one indexed custom-field value holding every word."""
    owner = _owner(entity)
    text_fields = select(CustomField.id).where(
        CustomField.entity == entity, CustomField.field_type.in_(SEARCHED)
    )
    lowered = func.lower(_V.value_text)
    return select(owner).where(_V.field_id.in_(text_fields), *(lowered.like(f"%{word}%") for word in words))
