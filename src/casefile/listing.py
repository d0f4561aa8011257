"""The one listing implementation: page, limit, sort, order, filters, search and `fields`.

A resource describes itself once with a `ListSpec`; `list_query(spec)` makes the FastAPI dependency
(documented parameters included) and `fetch_page` runs the two queries (rows and total) with the
same conditions. Every list endpoint goes through here (docs/api-conventions.md#lists).

Lists of what only grows and is read newest first while it grows (the audit trail) use the
cursor form instead, `cursor_query` and `fetch_after`: a page is "the next `limit` rows after this
key", so rows added meanwhile never shift a page, and no count of the whole table is made.
"""

from __future__ import annotations

import base64
import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from fastapi import Query
from pydantic import WithJsonSchema
from sqlalchemy import ColumnElement, Select, TextClause, false, func, literal, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from casefile.errors import ErrorDetail, ValidationFailed
from casefile.nlp.words import split_words

MAX_LIMIT = 100
DEFAULT_LIMIT = 20
MAX_PAGE = 100_000
MAX_SEARCH_LENGTH = 200
MAX_SEARCH_WORDS = 16
MAX_FILTER_VALUES = 50

SearchCondition = Callable[[AsyncSession, list[str]], ColumnElement[bool] | TextClause]
# A filter that is more than "the column equals one of the values" (a JSON array, a case-insensitive
# match): given the values, the condition.
FilterCondition = Callable[[AsyncSession, list[str]], ColumnElement[bool]]
Filter = InstrumentedAttribute[Any] | FilterCondition


@dataclass(frozen=True)
class ListSpec:
    """How one resource may be listed."""

    model: type[Any]
    sortable: dict[str, ColumnElement[Any] | InstrumentedAttribute[Any]]
    default_sort: str
    tiebreak: InstrumentedAttribute[Any]
    output_fields: frozenset[str]
    # A column (exact match) or a FilterCondition; either way a comma-separated value means any of.
    filters: dict[str, Filter] = field(default_factory=dict)
    # Filters over a closed set of values: anything else is a validation error, not an empty page.
    filter_choices: dict[str, tuple[str, ...]] = field(default_factory=dict)
    search: SearchCondition | None = None
    # Most lists show the newest first; a list of things due shows the soonest first.
    default_order: Literal["asc", "desc"] = "desc"


@dataclass(frozen=True)
class ListQuery:
    page: int
    limit: int
    sort: str
    order: Literal["asc", "desc"]
    # None: no search asked for. Empty: a search with no words in it, which matches nothing
    # (rather than everything, as if it had not been asked).
    search_words: list[str] | None
    fields: list[str] | None
    filters: dict[str, list[str]]

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.limit


def any_of(
    column: ColumnElement[Any] | InstrumentedAttribute[Any], values: Sequence[Any]
) -> ColumnElement[bool]:
    # Exact, or any of several; no value at all (`status=,`) matches nothing.
    return column == values[0] if len(values) == 1 else column.in_(values)


def any_of_ignoring_case(
    column: ColumnElement[Any] | InstrumentedAttribute[Any], values: list[str]
) -> ColumnElement[bool]:
    """`lower(column)` against `lower(value)`: the database folds both sides alike (PostgreSQL
    every letter, SQLite's built-in lower() ASCII letters only), and an index on `lower(column)`
    serves it."""
    return any_of(func.lower(column), [func.lower(literal(v)) for v in values])


def ignoring_case(column: InstrumentedAttribute[Any]) -> FilterCondition:
    """A filter on free text typed by people, ignoring case (`ny` finds `NY`)."""

    def condition(_: AsyncSession, values: list[str]) -> ColumnElement[bool]:
        return any_of_ignoring_case(column, values)

    return condition


def search_words(text: str | None) -> list[str] | None:
    """Words for full-text search (`casefile.nlp.words`: runs of letters and digits, after NFKC).
    The database side splits the same way, so "2026-000123" or "O'Brien" match whatever
    punctuation the user types. None when no search was asked for (a blank one is none)."""
    if text is None or not text.strip():
        return None
    return split_words(text)[:MAX_SEARCH_WORDS]


def parse_fields(value: str | None, allowed: frozenset[str]) -> list[str] | None:
    """`fields=id,title`: the top-level names to return. Unknown names are a validation error."""
    if value is None:
        return None
    names = [name.strip() for name in value.split(",") if name.strip()]
    unknown = [name for name in names if name not in allowed]
    if unknown or not names:
        message = (
            f"Unknown field(s): {', '.join(unknown)}. Allowed: {', '.join(sorted(allowed))}"
            if unknown
            else "Name at least one field"
        )
        raise ValidationFailed.on("fields", message)
    return list(dict.fromkeys(names))


FieldsParam = Annotated[str | None, Query(description="Comma-separated names of the fields to return")]


def fields_query(allowed: frozenset[str]) -> Callable[..., Awaitable[list[str] | None]]:
    """The dependency that parses `fields` for a single item: a 422 at once, so before any
    dependency listed after it (such as the item's lookup) runs."""

    async def dependency(fields: FieldsParam = None) -> list[str] | None:
        return parse_fields(fields, allowed)

    return dependency


def project(item: dict[str, Any], fields: list[str] | None) -> dict[str, Any]:
    return item if fields is None else {name: item[name] for name in fields}


def list_query(spec: ListSpec) -> Callable[..., Awaitable[ListQuery]]:
    """Build the dependency that parses and validates a list request for `spec`."""

    sort_names = ", ".join(spec.sortable)

    async def dependency(**params: Any) -> ListQuery:
        problems: list[ErrorDetail] = []
        # An empty `sort=` is a value, and not one of the choices: 422, not the default.
        sort = spec.default_sort if params["sort"] is None else params["sort"]
        if sort not in spec.sortable:
            problems.append(ErrorDetail("sort", f"Sort by one of: {sort_names}"))
        order = params["order"]
        if order not in ("asc", "desc"):
            problems.append(ErrorDetail("order", "Order must be asc or desc"))
        filters: dict[str, list[str]] = {}
        for name in spec.filters:
            raw = params[name]
            if raw is not None:
                values = [v.strip() for v in raw.split(",") if v.strip()]
                choices = spec.filter_choices.get(name)
                if len(values) > MAX_FILTER_VALUES:
                    problems.append(ErrorDetail(name, f"At most {MAX_FILTER_VALUES} values"))
                elif choices and any(v not in choices for v in values):
                    problems.append(ErrorDetail(name, f"Each value must be one of: {', '.join(choices)}"))
                filters[name] = values
        try:
            fields = parse_fields(params["fields"], spec.output_fields)
        except ValidationFailed as exc:
            problems.extend(exc.details or [])
            fields = None
        if problems:
            raise ValidationFailed(details=problems)
        return ListQuery(
            page=params["page"],
            limit=params["limit"],
            sort=sort,
            order=order,
            search_words=search_words(params["search"]),
            fields=fields,
            filters=filters,
        )

    parameters = [
        _param("page", int, Query(ge=1, le=MAX_PAGE, description="Page number, from 1"), 1),
        _param(
            "limit",
            int,
            Query(ge=1, le=MAX_LIMIT, description=f"Items per page, 1-{MAX_LIMIT}"),
            DEFAULT_LIMIT,
        ),
        # Published as enums (WithJsonSchema); the checks above say what is wrong in their own words.
        _param(
            "sort",
            Annotated[str | None, WithJsonSchema({"type": "string", "enum": list(spec.sortable)})],
            Query(description=f"Sort field: {sort_names}"),
            None,
        ),
        _param(
            "order",
            Annotated[str, WithJsonSchema({"type": "string", "enum": ["asc", "desc"]})],
            Query(description=f"asc or desc (default {spec.default_order})"),
            spec.default_order,
        ),
        inspect.Parameter("fields", inspect.Parameter.KEYWORD_ONLY, annotation=FieldsParam, default=None),
        _param(
            "search",
            str | None,
            Query(
                max_length=MAX_SEARCH_LENGTH,
                description="Full-text search; every word must match, as a prefix",
            ),
            None,
        ),
    ]
    parameters += [
        _param(
            name,
            str | None,
            Query(max_length=2000, description="Filter; comma-separated means any of"),
            None,
        )
        for name in spec.filters
    ]
    dependency.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    return dependency


def _param(name: str, annotation: Any, query: Any, default: Any) -> inspect.Parameter:
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[annotation, query], default=default
    )


async def fetch_page(
    session: AsyncSession,
    spec: ListSpec,
    query: ListQuery,
    *,
    conditions: Sequence[ColumnElement[bool]] = (),
    options: Sequence[Any] = (),
) -> tuple[list[Any], int]:
    """Return one page of `spec.model` rows and the total number of matching rows."""
    where: list[ColumnElement[bool] | TextClause] = list(conditions)
    for name, values in query.filters.items():
        spec_filter = spec.filters[name]
        where.append(
            any_of(spec_filter, values)
            if isinstance(spec_filter, InstrumentedAttribute)
            else spec_filter(session, values)
        )
    if query.search_words is not None and spec.search is not None:
        where.append(spec.search(session, query.search_words) if query.search_words else false())

    total = await session.scalar(select(func.count()).select_from(spec.model).where(*where)) or 0
    if query.offset >= total:
        return [], total

    sort_column, tiebreak = spec.sortable[query.sort], spec.tiebreak
    order_by = (
        (sort_column.desc(), tiebreak.desc())
        if query.order == "desc"
        else (sort_column.asc(), tiebreak.asc())
    )
    statement: Select[Any] = (
        select(spec.model)
        .where(*where)
        .order_by(*order_by)
        .limit(query.limit)
        .offset(query.offset)
        .options(*options)
    )
    rows = list((await session.scalars(statement)).all())
    return rows, total


# --- cursor (keyset) pagination ---------------------------------------------------------------


@dataclass(frozen=True)
class CursorQuery:
    """A page of a cursor list: `limit` rows whose key is below `after` (None: from the newest)."""

    after: int | None
    limit: int


def encode_cursor(key: int) -> str:
    """Opaque to callers: they pass back what `meta.pagination.next_cursor` said."""
    return base64.urlsafe_b64encode(f"k{key}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> int:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except ValueError:  # not base64, not ASCII or not UTF-8: each is a ValueError
        raw = ""
    if not raw.startswith("k") or not raw[1:].isdigit():
        raise ValidationFailed.on("cursor", "Not a cursor this list gave")
    return int(raw[1:])


def cursor_query(
    cursor: Annotated[
        str | None, Query(max_length=100, description="`meta.pagination.next_cursor` of the previous page")
    ] = None,
    limit: Annotated[
        int, Query(ge=1, le=MAX_LIMIT, description=f"Items per page, 1-{MAX_LIMIT}")
    ] = DEFAULT_LIMIT,
) -> CursorQuery:
    return CursorQuery(after=None if cursor is None else decode_cursor(cursor), limit=limit)


async def fetch_after(
    session: AsyncSession,
    model: type[Any],
    key: InstrumentedAttribute[int],
    query: CursorQuery,
    *,
    conditions: Sequence[ColumnElement[bool]] = (),
) -> tuple[list[Any], str | None]:
    """One page of `model` rows, newest (highest `key`) first, and the cursor of the next page
    (None on the last one). One row more than the page is read, to know whether there is a next."""
    where = list(conditions)
    if query.after is not None:
        where.append(key < query.after)
    statement = select(model).where(*where).order_by(key.desc()).limit(query.limit + 1)
    rows = list((await session.scalars(statement)).all())
    if len(rows) <= query.limit:
        return rows, None
    rows = rows[: query.limit]
    return rows, encode_cursor(getattr(rows[-1], key.key))
