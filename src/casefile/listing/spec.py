"""How a resource may be listed (`ListSpec`), what a list request asks (`ListQuery`), and what a
page holds (`Page`); the limits every list keeps, and the conditions its filters are built from."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, Literal, TypeVar

from sqlalchemy import ColumnElement, TextClause, func, literal
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from casefile.listing.projection import Projectable, Projection
from casefile.nlp.words import split_words

MAX_LIMIT = 100
DEFAULT_LIMIT = 20
MAX_PAGE = 100_000
MAX_SEARCH_LENGTH = 200
MAX_SEARCH_WORDS = 16
MAX_FILTER_VALUES = 50
CUSTOM_PREFIX = "cf."
MAX_CUSTOM_FILTERS = 10
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
    # What `fields=` may name (listing.projection.projectable of the response model).
    output_fields: Projectable
    # A column (exact match) or a FilterCondition; either way a comma-separated value means any of.
    filters: dict[str, Filter] = field(default_factory=dict)
    # Filters over a closed set of values: anything else is a validation error, not an empty page.
    filter_choices: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Filters that take one value of a JSON Schema format (`date`), published with it.
    filter_formats: dict[str, str] = field(default_factory=dict)
    search: SearchCondition | None = None
    # Most lists show the newest first; a list of things due shows the soonest first.
    default_order: Literal["asc", "desc"] = "desc"
    # The list also takes `cf.<name>=` filters and `sort=cf.<name>` (custom fields, whose names
    # are data): parsed here, resolved by the list's owner against the definitions.
    custom_fields: bool = False


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
    fields: Projection | None
    filters: dict[str, list[str]]
    # Set by `?cursor=`: the page is the rows after this one (and `page` is the cursor's page
    # number, so the meta still says where in the list it is).
    after: After | None = None
    # A digest of the filters and search as asked, so a cursor is only taken back by the same list
    # (a cursor of `status=open` against `status=closed` would silently skip rows).
    scope: str = ""
    # `cf.<name>=` filters as asked (name without the prefix: comma-separated values).
    custom_filters: dict[str, list[str]] = field(default_factory=dict)

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.limit


RowT = TypeVar("RowT")


@dataclass(frozen=True)
class Narrowed:
    """Another place a list's matches can be read from, when the list is in order `sort`: rows
    (values in an index, one per matching record) that carry the record's id and sort key, so that
    finding, counting and ordering the matches reads that index rather than each matching record.
    `where` must select exactly the records the caller's conditions select (the list's filters and
    search are added as they are, on the records' ids). Only for a costly match (`match_once`)."""

    id: ColumnElement[Any] | InstrumentedAttribute[Any]
    key: ColumnElement[Any] | InstrumentedAttribute[Any]
    sort: str
    where: tuple[ColumnElement[bool], ...]

    def also(self, *conditions: ColumnElement[bool]) -> Narrowed:
        return replace(self, where=(*self.where, *conditions))


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
