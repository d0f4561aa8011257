"""The one listing implementation: page, limit, sort, order, filters, search and `fields`
(docs/api-conventions.md#lists). Import from here (`from casefile.listing import ListSpec`).

A resource describes itself once with a `ListSpec` (in its domain's `repository.py`);
`list_query(spec)` makes the FastAPI dependency (documented parameters included) and `fetch_page`
runs the two queries (rows and total) with the same conditions. The modules are the seams:

- `spec`: `ListSpec`, `ListQuery`, `Page`, the limits, the conditions filters are built from;
- `params`: the query string as dependencies (`list_query`, `cursor_query`, `fields_query`);
- `paging`: `fetch_page` and `fetch_next`, one keyset engine for both;
- `cursors`: the next page's cursor.

Totals are exact up to `TOTAL_CAP` matches and the lower bound `TOTAL_CAP` above it
(`total_exact: false`): counting a million matches costs hundreds of milliseconds, counting at
most 10,001 a few. Every page also gives `next_cursor`, the page after it by key (the sort key and
the id) rather than by OFFSET, so deep pages cost what the first one costs. Lists of what only
grows and is read newest first while it grows (the audit trail) take a cursor only
(`cursor_query`, `fetch_next`): rows added meanwhile never shift a page, and nothing is counted.
"""

from casefile.listing.paging import fetch_next, fetch_page
from casefile.listing.params import build_list_query, cursor_query, fields_query, list_query
from casefile.listing.projection import Projectable, Projection, parse_fields, project, projectable
from casefile.listing.spec import (
    CUSTOM_PREFIX,
    DEFAULT_LIMIT,
    MAX_LIMIT,
    MAX_PAGE,
    MAX_SEARCH_WORDS,
    TOTAL_CAP,
    After,
    Filter,
    FilterCondition,
    ListQuery,
    ListSpec,
    Narrowed,
    Page,
    RowT,
    SearchCondition,
    any_of,
    any_of_ignoring_case,
    ignoring_case,
    search_words,
)

__all__ = [
    "CUSTOM_PREFIX",
    "DEFAULT_LIMIT",
    "MAX_LIMIT",
    "MAX_PAGE",
    "MAX_SEARCH_WORDS",
    "TOTAL_CAP",
    "After",
    "Filter",
    "FilterCondition",
    "ListQuery",
    "ListSpec",
    "Narrowed",
    "Page",
    "Projectable",
    "Projection",
    "RowT",
    "SearchCondition",
    "any_of",
    "any_of_ignoring_case",
    "build_list_query",
    "cursor_query",
    "fetch_next",
    "fetch_page",
    "fields_query",
    "ignoring_case",
    "list_query",
    "parse_fields",
    "project",
    "projectable",
    "search_words",
]
