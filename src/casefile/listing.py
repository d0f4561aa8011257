"""The one listing implementation: page, limit, sort, order, filters, search and `fields`.

A resource describes itself once with a `ListSpec`; `list_query(spec)` makes the FastAPI dependency
(documented parameters included) and `fetch_page` runs the two queries (rows and total) with the
same conditions. Every list endpoint goes through here (docs/api-conventions.md#lists).

Totals are exact up to `TOTAL_CAP` matches and the lower bound `TOTAL_CAP` above it
(`total_exact: false`): counting a million matches costs hundreds of milliseconds, counting at
most 10,001 a few. Every page also gives `next_cursor`, the page after it by key (the sort key and
the id, "after this row") rather than by OFFSET, so deep pages cost what the first one costs.

Lists of what only grows and is read newest first while it grows (the audit trail) use the
cursor form instead, `cursor_query` and `fetch_after`: a page is "the next `limit` rows after this
key", so rows added meanwhile never shift a page, and no count of the whole table is made.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import inspect
import json
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Annotated, Any, Generic, Literal, TypeVar

from fastapi import Query
from pydantic import WithJsonSchema
from sqlalchemy import (
    Column,
    ColumnElement,
    Select,
    TextClause,
    and_,
    false,
    func,
    literal,
    or_,
    select,
    tuple_,
)
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute
from sqlalchemy.sql import visitors

from casefile.errors import ErrorDetail, ValidationFailed
from casefile.nlp.words import split_words

MAX_LIMIT = 100
DEFAULT_LIMIT = 20
MAX_PAGE = 100_000
MAX_SEARCH_LENGTH = 200
MAX_SEARCH_WORDS = 16
MAX_FILTER_VALUES = 50
# Totals are counted exactly up to here; above it `total` is this lower bound (`total_exact: false`).
TOTAL_CAP = 10_000
# A cursor carries a sort value (a title of up to 500 characters, lower-cased) and an id.
MAX_CURSOR_LENGTH = 4000

# Async: a search may first look something up (cases look up the whole words a prefix stands for).
SearchCondition = Callable[[AsyncSession, list[str]], Awaitable[ColumnElement[bool] | TextClause]]
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
class After:
    """Where a cursor page starts: after the row with this sort value and id."""

    value: Any
    id: str


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
    # Set by `?cursor=`: the page is the rows after this one (and `page` is the cursor's page
    # number, so the meta still says where in the list it is).
    after: After | None = None
    # A digest of the filters and search as asked, so a cursor is only taken back by the same list
    # (a cursor of `status=open` against `status=closed` would silently skip rows).
    scope: str = ""

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.limit


RowT = TypeVar("RowT")


@dataclass(frozen=True)
class Page(Generic[RowT]):
    """One page of a list: its rows, the total (exact up to `TOTAL_CAP`, else that lower bound)
    and the cursor of the next page (None on the last)."""

    rows: list[RowT]
    total: int
    total_exact: bool = True
    next_cursor: str | None = None

    def pages(self, limit: int) -> int:
        return math.ceil(self.total / limit) if self.total else 0


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
        words = search_words(params["search"])
        scope = _scope(filters, words)
        page, after = params["page"], None
        if params["cursor"] is not None:
            if page != 1:
                raise ValidationFailed.on("page", "Give a page or a cursor, not both")
            page, after = _decode_list_cursor(params["cursor"], spec, sort, order, scope)
        return ListQuery(
            page=page,
            limit=params["limit"],
            sort=sort,
            order=order,
            search_words=words,
            fields=fields,
            filters=filters,
            after=after,
            scope=scope,
        )

    parameters = [
        _param("page", int, Query(ge=1, le=MAX_PAGE, description="Page number, from 1"), 1),
        _param(
            "cursor",
            str | None,
            Query(
                max_length=MAX_CURSOR_LENGTH,
                description="`meta.pagination.next_cursor` of the previous page, instead of `page`: "
                "the next page by key (no OFFSET, however deep). Repeat the same sort, order, "
                "filters and search.",
            ),
            None,
        ),
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
) -> Page[Any]:
    """One page of `spec.model` rows, the total of matching rows (exact up to `TOTAL_CAP`) and
    the next page's cursor. One row more than the page is read, to know whether there is a next."""
    where: list[ColumnElement[bool] | TextClause] = list(conditions)
    for name, values in query.filters.items():
        spec_filter = spec.filters[name]
        where.append(
            any_of(spec_filter, values)
            if isinstance(spec_filter, InstrumentedAttribute)
            else spec_filter(session, values)
        )
    if query.search_words is not None and spec.search is not None:
        where.append(await spec.search(session, query.search_words) if query.search_words else false())

    page = _Paging(spec, query, where, options)
    if query.search_words:
        # A search is the costly condition (a full-text index scan, then every matching row read):
        # match once, and take both the total and the page's keys from those matches.
        found = await page.from_matches(session)
        if isinstance(found, Page):
            return found
        return await page.directly(session, known_total=found)
    return await page.directly(session)


class _Paging:
    """The statements of one `fetch_page`."""

    def __init__(
        self,
        spec: ListSpec,
        query: ListQuery,
        where: list[ColumnElement[bool] | TextClause],
        options: Sequence[Any],
    ) -> None:
        self.spec, self.query, self.where, self.options = spec, query, where, options
        self.sort_column, self.tiebreak = spec.sortable[query.sort], spec.tiebreak
        self.descending = query.order == "desc"
        self.nullable = _nullable(self.sort_column)

    def order_by(self, key: Any, row_id: Any) -> tuple[ColumnElement[Any], ...]:
        return (
            _ordering(key, self.descending, self.nullable),
            row_id.desc() if self.descending else row_id.asc(),
        )

    def after(self, key: Any, row_id: Any) -> list[ColumnElement[bool]]:
        after = self.query.after
        if after is None:
            return []
        return [_after(key, row_id, after, descending=self.descending, nullable=self.nullable)]

    def rows(self) -> Select[Any]:
        return select(self.spec.model, self.sort_column.label("_sort_key")).options(*self.options)

    def result(self, found: Sequence[Any], total: int, exact: bool) -> Page[Any]:
        has_next = len(found) > self.query.limit
        found = found[: self.query.limit]
        rows = [row[0] for row in found]
        next_cursor = (
            _encode_list_cursor(self.query, found[-1][1], getattr(rows[-1], self.tiebreak.key))
            if has_next
            else None
        )
        return Page(rows, total, exact, next_cursor)

    def offset(self, statement: Select[Any]) -> Select[Any]:
        query = self.query
        return statement.offset(query.offset) if query.after is None and query.offset else statement

    async def directly(self, session: AsyncSession, known_total: int | None = None) -> Page[Any]:
        """The page by its sort key (an index on it answers), then the total if the page does
        not tell it and it is not `known_total` (counted already, capped)."""
        query = self.query
        statement = (
            self.rows()
            .where(*self.where, *self.after(self.sort_column, self.tiebreak))
            .order_by(*self.order_by(self.sort_column, self.tiebreak))
            .limit(query.limit + 1)
        )
        found = (await session.execute(self.offset(statement))).all()
        seen = query.offset + len(found)
        if query.after is None and len(found) <= query.limit and (found or not query.offset):
            # The last page by offset: everything before it and on it is the total, no count needed
            # (above the cap, the same lower bound as every other page says).
            return self.result(found, min(seen, TOTAL_CAP), seen <= TOTAL_CAP)
        if known_total is not None:
            return self.result(found, min(known_total, TOTAL_CAP), known_total <= TOTAL_CAP)
        # The count reads at most TOTAL_CAP + 1 matching rows, however many there are.
        capped = select(literal(1)).select_from(self.spec.model).where(*self.where).limit(TOTAL_CAP + 1)
        counted = await session.scalar(select(func.count()).select_from(capped.subquery())) or 0
        return self.result(found, min(counted, TOTAL_CAP), counted <= TOTAL_CAP)

    async def from_matches(self, session: AsyncSession) -> Page[Any] | int | None:
        """At most TOTAL_CAP + 1 matches (id and sort key only), counted, and the page's keys
        taken from them; when there are no more than TOTAL_CAP that is the page, and its rows are
        read by id. Else the count (more matches than TOTAL_CAP: the page must be found among
        all of them), or None when no match is on this page to carry the count."""
        query = self.query
        matched = (
            select(self.tiebreak.label("id"), self.sort_column.label("key"))
            .select_from(self.spec.model)
            .where(*self.where)
            .limit(TOTAL_CAP + 1)
            .subquery("matched")
        )
        counted = select(matched.c.id, matched.c.key, func.count().over().label("n")).subquery("counted")
        keys = self.offset(
            select(counted.c.id, counted.c.n)
            .where(*self.after(counted.c.key, counted.c.id))
            .order_by(*self.order_by(counted.c.key, counted.c.id))
            .limit(query.limit + 1)
        )
        found_keys = (await session.execute(keys)).all()
        if not found_keys:
            return None
        if found_keys[0].n > TOTAL_CAP:
            return int(found_keys[0].n)
        statement = (
            self.rows()
            .where(self.tiebreak.in_([row.id for row in found_keys]))
            .order_by(*self.order_by(self.sort_column, self.tiebreak))
        )
        found = (await session.execute(statement)).all()
        return self.result(found, found_keys[0].n, True)


def _nullable(expression: ColumnElement[Any] | InstrumentedAttribute[Any]) -> bool:
    """Whether a sort key may be NULL: when any column it is made of may be."""
    element = expression.expression if isinstance(expression, InstrumentedAttribute) else expression
    return any(c.nullable for c in visitors.iterate(element) if isinstance(c, Column))


def _ordering(
    column: ColumnElement[Any] | InstrumentedAttribute[Any], descending: bool, nullable: bool
) -> ColumnElement[Any]:
    # NULL sorts as the greatest value on both databases (PostgreSQL's default; SQLite's is the
    # opposite), so that a cursor after a NULL means the same on both.
    if descending:
        return column.desc().nulls_first() if nullable else column.desc()
    return column.asc().nulls_last() if nullable else column.asc()


def _after(
    column: ColumnElement[Any] | InstrumentedAttribute[Any],
    tiebreak: ColumnElement[Any] | InstrumentedAttribute[Any],
    after: After,
    *,
    descending: bool,
    nullable: bool,
) -> ColumnElement[bool]:
    """The rows after `after` in the list's order (sort key, then id, both the same direction)."""
    value = literal(after.value, column.type)
    key = literal(after.id, tiebreak.type)
    id_after = tiebreak < key if descending else tiebreak > key
    if not nullable:
        # A row-value comparison: an index on (key, id) answers it as one range.
        pair = tuple_(column, tiebreak)
        return pair < tuple_(value, key) if descending else pair > tuple_(value, key)
    if after.value is None:  # NULLs are the greatest: first when descending, last when ascending
        return (
            or_(column.is_not(None), and_(column.is_(None), id_after))
            if descending
            else and_(column.is_(None), id_after)
        )
    beyond = column < value if descending else column > value
    later = or_(beyond, and_(column == value, id_after))
    return later if descending else or_(later, column.is_(None))


def _python_type(column: ColumnElement[Any] | InstrumentedAttribute[Any]) -> type | None:
    try:
        expected: type = column.type.python_type
    except NotImplementedError:
        return None
    return float | int if expected is float else expected  # type: ignore[return-value]


def _scope(filters: dict[str, list[str]], words: list[str] | None) -> str:
    asked = json.dumps([sorted(filters.items()), words], separators=(",", ":"))
    return hashlib.blake2b(asked.encode(), digest_size=6).hexdigest()


def _encode_list_cursor(query: ListQuery, value: Any, row_id: str) -> str:
    """Opaque to callers. It names the sort, order and scope it belongs to, the next page's number,
    and the last row's sort value (typed, so it binds as the column's type) and id."""
    if isinstance(value, datetime):
        typed: list[Any] = ["t", value.isoformat()]
    elif isinstance(value, date):
        typed = ["d", value.isoformat()]
    elif value is None or isinstance(value, bool | int | float | str):
        typed = ["v", value]
    else:  # a sort key of a type not listed above is a programming error, not a caller's
        raise TypeError(f"cannot put a {type(value).__name__} in a cursor")
    body = {"s": query.sort, "o": query.order, "q": query.scope, "p": query.page + 1, "k": typed, "i": row_id}
    raw = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_list_cursor(cursor: str, spec: ListSpec, sort: str, order: str, scope: str) -> tuple[int, After]:
    invalid = ValidationFailed.on("cursor", "Not a cursor this list gave")
    try:
        body = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        tag, raw = body["k"]
        page, row_id = body["p"], body["i"]
        if tag == "t":
            value: Any = datetime.fromisoformat(raw)
            if value.tzinfo is None:
                raise ValueError("naive")
        elif tag == "d":
            value = date.fromisoformat(raw)
        elif tag == "v" and (raw is None or isinstance(raw, int | float | str)):
            value = raw
        else:
            raise ValueError(tag)
    except (ValueError, TypeError, KeyError, binascii.Error, UnicodeDecodeError):
        raise invalid from None
    if not isinstance(page, int) or not 1 < page <= MAX_PAGE or not isinstance(row_id, str):
        raise invalid
    expected = _python_type(spec.sortable[sort])
    if value is not None and expected is not None and not isinstance(value, expected):
        raise invalid  # e.g. text where a time is sorted: the database would refuse to compare
    if (body.get("s"), body.get("o"), body.get("q")) != (sort, order, scope):
        raise ValidationFailed.on("cursor", "This cursor is for another sort, order, filter or search")
    return page, After(value, row_id)


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
