"""Running a list: `fetch_page` (rows, the total, the next page's cursor) and `fetch_next` (rows and
the next cursor, no total: lists that only grow and are read newest first, such as the audit trail).
Both find a page by key, "the rows after this one" in the list's order (sort key, then id), never
by OFFSET once a cursor is given, so deep pages cost what the first one costs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

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

from casefile.listing.cursors import encode_cursor
from casefile.listing.spec import TOTAL_CAP, After, ListQuery, ListSpec, Narrowed, Page, any_of


async def fetch_page(
    session: AsyncSession,
    spec: ListSpec,
    query: ListQuery,
    *,
    conditions: Sequence[ColumnElement[bool]] = (),
    options: Sequence[Any] = (),
    match_once: bool = False,
    narrowed: Narrowed | None = None,
) -> Page[Any]:
    """One page of `spec.model` rows, the total of matching rows (exact up to `TOTAL_CAP`) and
    the next page's cursor. One row more than the page is read, to know whether there is a next.
    `match_once`: the conditions are, like a search, a costly match (a semi-join on custom-field
    values): matched once for both the total and the page's keys; `narrowed`, where the list is in
    its order, reads those matches from an index that holds their sort keys (listing.Narrowed)."""
    rest = await _where(session, spec, query, ())
    paging = _Paging(spec, query, [*conditions, *rest], options)
    if narrowed is not None and narrowed.sort == query.sort:
        paging.narrowed, paging.rest, paging.guard = narrowed, rest, list(conditions)
    if query.search_words or match_once:
        return await paging.searched(session)
    return await paging.by_key(session)


async def fetch_next(
    session: AsyncSession,
    spec: ListSpec,
    query: ListQuery,
    *,
    conditions: Sequence[ColumnElement[bool]] = (),
) -> tuple[list[Any], str | None]:
    """The page's rows and the next page's cursor (None on the last), without a total: for lists
    read from the newest while they grow, where counting the whole would cost more than the page."""
    paging = _Paging(spec, query, await _where(session, spec, query, conditions), ())
    found = await paging.rows_by_key(session)
    page = paging.result(found, total=0, exact=False)
    return page.rows, page.next_cursor


async def _where(
    session: AsyncSession, spec: ListSpec, query: ListQuery, conditions: Sequence[ColumnElement[bool]]
) -> list[ColumnElement[bool] | TextClause]:
    """The caller's conditions, the filters asked for and the search."""
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
    return where


@dataclass(frozen=True)
class _Matches:
    """What a search's one pass over its matches found: how many there are (at most TOTAL_CAP + 1
    are counted), and the ids of this page's rows among them. `total` is None when no match falls
    on this page (nothing carried the count)."""

    total: int | None
    ids: list[Any]


class _Paging:
    """The statements of one page."""

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
        # Where the matches are read from instead, and the conditions (filters, search) it lacks.
        self.narrowed: Narrowed | None = None
        self.rest: list[ColumnElement[bool] | TextClause] = []
        # The caller's own conditions (who may see what), applied again to the page's rows when
        # the matches came from elsewhere: a page never holds a row they exclude, whatever the
        # other place said (a few ids: cheap).
        self.guard: list[ColumnElement[bool]] = []

    async def by_key(self, session: AsyncSession, known_total: int | None = None) -> Page[Any]:
        """The page by its sort key (an index on it answers), then the total if the page does
        not tell it and it is not `known_total` (counted already, capped)."""
        query = self.query
        found = await self.rows_by_key(session)
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

    async def searched(self, session: AsyncSession) -> Page[Any]:
        """A search is the costly condition (a full-text index scan, then every matching row
        read): match once, and take both the total and the page's keys from those matches. With
        more than TOTAL_CAP matches (or none on this page), the page is found by key among all."""
        matches = await self.matches(session)
        if matches.total is None and self.query.after is None and not self.query.offset:
            # No page was skipped, so nothing matches at all: reading the list by key would only
            # walk it to find nothing (as long as a whole unfiltered scan, for a rare value).
            return self.result([], 0, True)
        if matches.total is None or matches.total > TOTAL_CAP:
            return await self.by_key(session, known_total=matches.total)
        statement = (
            self.rows()
            .where(self.tiebreak.in_(matches.ids), *self.guard)
            .order_by(*self.order_by(self.sort_column, self.tiebreak))
        )
        found = (await session.execute(statement)).all()
        return self.result(found, matches.total, True)

    async def matches(self, session: AsyncSession) -> _Matches:
        """At most TOTAL_CAP + 1 matches (id and sort key only), counted, and this page's ids
        taken from them, in one statement."""
        narrowed = self.narrowed
        if narrowed is None:
            source = (
                select(self.tiebreak.label("id"), self.sort_column.label("key"))
                .select_from(self.spec.model)
                .where(*self.where)
            )
        else:
            source = select(narrowed.id.label("id"), narrowed.key.label("key")).where(*narrowed.where)
            if self.rest:
                # The list's other filters and its search are on the records themselves.
                source = source.where(narrowed.id.in_(select(self.tiebreak).where(*self.rest)))
        matched = source.limit(TOTAL_CAP + 1).subquery("matched")
        counted = select(matched.c.id, matched.c.key, func.count().over().label("n")).subquery("counted")
        keys = self.offset(
            select(counted.c.id, counted.c.n)
            .where(*self.after(counted.c.key, counted.c.id))
            .order_by(*self.order_by(counted.c.key, counted.c.id))
            .limit(self.query.limit + 1)
        )
        found = (await session.execute(keys)).all()
        return _Matches(total=int(found[0].n) if found else None, ids=[row.id for row in found])

    async def rows_by_key(self, session: AsyncSession) -> Sequence[Any]:
        """The page's rows (and one more, if there is a next page) with their sort keys."""
        statement = (
            self.rows()
            .where(*self.where, *self.after(self.sort_column, self.tiebreak))
            .order_by(*self.order_by(self.sort_column, self.tiebreak))
            .limit(self.query.limit + 1)
        )
        found: Sequence[Any] = (await session.execute(self.offset(statement))).all()
        return found

    def rows(self) -> Select[Any]:
        return select(self.spec.model, self.sort_column.label("_sort_key")).options(*self.options)

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

    def offset(self, statement: Select[Any]) -> Select[Any]:
        query = self.query
        return statement.offset(query.offset) if query.after is None and query.offset else statement

    def result(self, found: Sequence[Any], total: int, exact: bool) -> Page[Any]:
        has_next = len(found) > self.query.limit
        found = found[: self.query.limit]
        rows = [row[0] for row in found]
        next_cursor = (
            encode_cursor(self.query, found[-1][1], getattr(rows[-1], self.tiebreak.key))
            if has_next
            else None
        )
        return Page(rows, total, exact, next_cursor)


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
