"""Case queries: the lookup by id, and those that differ by database (full-text search, the
case-number counter)."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Executable,
    String,
    TextClause,
    bindparam,
    case,
    column,
    exists,
    false,
    func,
    literal,
    select,
    table,
    text,
    union_all,
)
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import make_transient_to_detached

from casefile.cases.schemas import PRIORITIES, STATUSES, CaseOut
from casefile.db import dialect_insert, dialect_name, get_or_404
from casefile.errors import NotFound
from casefile.listing import ListSpec, ignoring_case
from casefile.models import Case, CaseAssignee, CaseNumberCounter


async def get_case(session: AsyncSession, case_id: str) -> Case:
    """The case, or 404 when it does not exist or is in the trash (docs/api-conventions.md#trash)."""
    case = await get_or_404(session, Case, case_id, "Case not found")
    if case.deleted_at is not None:
        raise NotFound("Case not found")
    return case


# A prefix that stands for more whole words than this is searched as a prefix (GIN's own
# expansion). Measured on 1,000,000 cases (bench/README.md, "Issue 16: one lexicon"), the index
# part of `<prefix> & witness`: 2 words 9 -> 2 ms, 7 words 25 -> 18 ms, but 16 words (common
# ones) 150 -> 335 ms, 220 words 0.6 -> 70 ms, and an OR of 10,000 words ran for minutes.
MAX_WORDS_PER_PREFIX = 8
# Words whose normalisation by PostgreSQL's parser and `simple` dictionary is certainly the
# word itself (lower-case ASCII letters and digits): only those are looked up in the lexicon.
PLAIN_WORD = re.compile(r"[a-z0-9]+")
_CASE_WORDS = table("case_words", column("word", String))


async def search_condition(session: AsyncSession, words: list[str]) -> ColumnElement[bool] | TextClause:
    """Every word must match as a word prefix, case-insensitively, in title, case number, client
    name or description. PostgreSQL: the GIN-indexed `search_vector`; SQLite: the FTS5 index
    `cases_fts`. Words are letters and digits only (see listing.search_words), so they are safe
    inside the query syntax of both."""
    if dialect_name(session) == "postgresql":
        query = await _whole_words_query(session, words)
        if query is None:
            return false()
        return text("cases.search_vector @@ to_tsquery('simple', :case_search)").bindparams(case_search=query)
    query = " ".join(f'"{word}"*' for word in words)
    return text("cases.rowid IN (SELECT rowid FROM cases_fts WHERE cases_fts MATCH :case_search)").bindparams(
        case_search=query
    )


async def _whole_words_query(session: AsyncSession, words: list[str]) -> str | None:
    """The tsquery text for `words` on PostgreSQL: each prefix replaced by the whole words of the
    cases that start with it (`valu` -> `(valuation | value)`), from the lexicon `case_words`
    (migration 0014), ANDed. GIN intersects whole words' posting lists, where a `word:*` makes
    it gather a bitmap of every row holding any word with that prefix first. What matches is
    unchanged: the lexicon holds every word of every case (and perhaps words no case holds any
    more, which match nothing). None when a word starts no word at all: nothing can match."""
    plain = sorted({word for word in words if PLAIN_WORD.fullmatch(word)})
    expanded: dict[str, list[str]] = {word: [] for word in plain}
    if plain:
        lookups = [
            select(literal(prefix).label("prefix"), _CASE_WORDS.c.word)
            .where(_CASE_WORDS.c.word.like(f"{prefix}%"))
            .distinct()
            .limit(MAX_WORDS_PER_PREFIX + 1)
            .subquery()
            .select()
            for prefix in plain
        ]
        for prefix, word in (await session.execute(union_all(*lookups))).all():
            expanded[prefix].append(word)
    terms: list[str] = []
    for word in words:
        whole = expanded.get(word)
        if whole is None or len(whole) > MAX_WORDS_PER_PREFIX:
            terms.append(f"{word}:*")
        elif not whole:
            return None
        else:
            terms.append(f"({' | '.join(whole)})")
    return " & ".join(terms)


def _assigned_to_any(session: AsyncSession, user_ids: list[str]) -> ColumnElement[bool]:
    """`assigned_to=<user id>,…`: cases any of them is assigned to (`me` is replaced by the
    caller's id before this runs, cases.service.list_cases)."""
    return exists().where(CaseAssignee.case_id == Case.id, CaseAssignee.user_id.in_(user_ids))


CASE_LIST = ListSpec(
    model=Case,
    sortable={
        "created_at": Case.created_at,
        "updated_at": Case.updated_at,
        "title": func.lower(Case.title),
        "case_number": Case.case_number,
        "status": Case.status,
        # By urgency, not alphabet.
        "priority": case({p: i for i, p in enumerate(PRIORITIES)}, value=Case.priority),
    },
    default_sort="created_at",
    tiebreak=Case.id,
    output_fields=frozenset(CaseOut.model_fields),
    filters={
        "status": Case.status,
        # Free text typed by people: `ny` finds `NY` (lower() on both sides, an index on lower()).
        "case_type": ignoring_case(Case.case_type),
        "priority": Case.priority,
        "jurisdiction": ignoring_case(Case.jurisdiction),
        "assigned_to": _assigned_to_any,
        "access": Case.access,
    },
    filter_choices={"status": STATUSES, "priority": PRIORITIES, "access": ("firm", "restricted")},
    search=search_condition,
)


# The create's statements are built once per dialect (building one costs more than running it):
# each is run with its values as parameters.
@cache
def _bump_counter(insert: Callable[..., Any]) -> Executable:
    counter = CaseNumberCounter.__table__
    statement: Executable = (
        insert(counter)
        .values(year=bindparam("year"), last_value=1)
        .on_conflict_do_update(index_elements=[counter.c.year], set_={"last_value": counter.c.last_value + 1})
        .returning(counter.c.last_value)
    )
    return statement


@cache
def _insert_unless_number_taken(insert: Callable[..., Any]) -> Executable:
    cases = Case.__table__
    statement: Executable = (
        insert(cases).on_conflict_do_nothing(index_elements=[cases.c.case_number]).returning(cases.c.id)
    )
    return statement


async def next_case_number(session: AsyncSession, year: int) -> str:
    """`YYYY-NNNNNN`, from a per-year counter bumped by one atomic upsert (concurrent creates
    never get the same number)."""
    value = await session.scalar(_bump_counter(dialect_insert(session)), {"year": year})
    return f"{year}-{value:06d}"


async def insert_case(session: AsyncSession, case: Case) -> bool:
    """Insert the new `case` (its id set) unless its number is taken, and make it one of the
    session's rows; False when the number was taken. The unique index decides (no
    check-then-insert race), in one statement: `ON CONFLICT (case_number) DO NOTHING` needs no
    savepoint, raises nothing, and the ORM does not flush, re-read or load anything for it."""
    values = {column.key: getattr(case, column.key) for column in Case.__table__.columns}
    if await session.scalar(_insert_unless_number_taken(dialect_insert(session)), values) is None:
        return False
    for key, value in values.items():  # every column is then loaded: none is read back later
        setattr(case, key, value)
    make_transient_to_detached(case)
    session.add(case)
    return True


async def case_number_taken(session: AsyncSession, case_number: str) -> bool:
    return await session.scalar(select(Case.id).where(Case.case_number == case_number)) is not None


async def cases_by_id(session: AsyncSession, case_ids: set[str]) -> dict[str, Case]:
    """The cases of `case_ids` (for labels beside rows the caller was already allowed to list)."""
    if not case_ids:
        return {}
    rows = await session.scalars(select(Case).where(Case.id.in_(sorted(case_ids))))
    return {case.id: case for case in rows}
