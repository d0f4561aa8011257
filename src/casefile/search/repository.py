"""Passage storage and the search queries, for SQLite and PostgreSQL.

Passages (`passages`) are written only here: the pipeline replaces a document's passages in its
own transaction; deleting a document cascades in the database. Full text over passages uses
PostgreSQL's generated `search_vector` (english) with its GIN index, or SQLite's FTS5
`passages_fts` (porter); words come from `casefile.listing.search_words`, so they are
letters and digits only and safe inside both query syntaxes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Select,
    column,
    delete,
    func,
    insert,
    literal_column,
    select,
    table,
    text,
)
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.cases.repository import search_condition
from casefile.clock import utcnow
from casefile.db import dialect_name
from casefile.models import Case, Document, Passage, document_not_trashed
from casefile.nlp.types import EMBEDDING_DIM, TextPassage, Vectors


def database_key(session: AsyncSession) -> str:
    """Names the database a session talks to (the vector index registry's key)."""
    return session.get_bind().engine.url.render_as_string(hide_password=True)


async def replace_passages(
    session: AsyncSession,
    *,
    document_id: str,
    case_id: str,
    passages: list[TextPassage],
    vectors: Vectors,
    version: int = 1,
) -> None:
    """Delete the document's passages and insert `passages` with their `vectors` (one L2-normalised
    row each), in the caller's transaction: those of its `version`."""
    if len(passages) != len(vectors) or (len(passages) and vectors.shape[1] != EMBEDDING_DIM):
        raise ValueError(f"{len(passages)} passages but vectors of shape {vectors.shape}")
    await session.execute(delete(Passage).where(Passage.document_id == document_id))
    if not passages:
        return
    import numpy as np  # the `casefile[ai]` extra: only a process that embeds writes passages

    matrix = np.ascontiguousarray(vectors, dtype="<f4")
    now = utcnow()
    rows = [
        {
            "document_id": document_id,
            "case_id": case_id,
            "version": version,
            "passage_index": passage.index,
            "page": passage.page,
            "start": passage.start,
            "end": passage.end,
            "text": passage.text,
            "embedding": matrix[i].tobytes(),
            "created_at": now,
        }
        for i, passage in enumerate(passages)
    ]
    await session.execute(insert(Passage), rows)


# ---- the vector index's reads --------------------------------------------------------------------


async def vectors_after(session: AsyncSession, after_id: int, limit: int) -> list[tuple[int, str, bytes]]:
    """(id, document_id, embedding) of passages with id > `after_id`, by id."""
    statement = (
        select(Passage.id, Passage.document_id, Passage.embedding)
        .where(Passage.id > after_id)
        .order_by(Passage.id)
        .limit(limit)
    )
    return [(int(r[0]), str(r[1]), bytes(r[2])) for r in (await session.execute(statement)).all()]


async def passage_count(session: AsyncSession) -> int:
    return int(await session.scalar(select(func.count()).select_from(Passage)) or 0)


async def passage_keys(session: AsyncSession) -> list[tuple[int, str]]:
    """(id, document_id) of every passage: what the index compares itself against."""
    rows = await session.execute(select(Passage.id, Passage.document_id))
    return [(int(r[0]), str(r[1])) for r in rows.all()]


async def vectors_of(session: AsyncSession, ids: Sequence[int]) -> list[tuple[int, str, bytes]]:
    statement = select(Passage.id, Passage.document_id, Passage.embedding).where(Passage.id.in_(list(ids)))
    return [(int(r[0]), str(r[1]), bytes(r[2])) for r in (await session.execute(statement)).all()]


# ---- search --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PassageRow:
    id: int
    document_id: str
    document_title: str
    case_id: str
    passage_index: int
    page: int
    start: int
    end: int
    text: str
    version: int  # the document version it was extracted from


_PASSAGE_COLUMNS = (
    Passage.id,
    Passage.document_id,
    Document.title,
    Passage.case_id,
    Passage.passage_index,
    Passage.page,
    Passage.start,
    Passage.end,
    Passage.text,
    func.coalesce(Passage.version, 1),
)


def _passage(row: Sequence[object]) -> PassageRow:
    return PassageRow(*row)  # type: ignore[arg-type]


async def _passages_where(
    session: AsyncSession, visible: ColumnElement[bool], *conditions: ColumnElement[bool]
) -> list[PassageRow]:
    statement = (
        select(*_PASSAGE_COLUMNS)
        .join(Document, Document.id == Passage.document_id)
        .join(Case, Case.id == Document.case_id)
        .where(visible, document_not_trashed(), *conditions)
    )
    return [_passage(row) for row in (await session.execute(statement)).all()]


async def passages_by_ids(
    session: AsyncSession, ids: Sequence[int], visible: ColumnElement[bool]
) -> dict[int, PassageRow]:
    """The passages that still exist among `ids`, of cases the caller may see (`visible`, a
    condition on `cases`: access/matter.py), with their document's title."""
    if not ids:
        return {}
    return {row.id: row for row in await _passages_where(session, visible, Passage.id.in_(list(ids)))}


async def first_passages(
    session: AsyncSession, document_ids: Sequence[str], visible: ColumnElement[bool]
) -> dict[str, PassageRow]:
    """Each document's first passage (for hits that matched on the title alone)."""
    if not document_ids:
        return {}
    rows = await _passages_where(
        session, visible, Passage.document_id.in_(list(document_ids)), Passage.passage_index == 0
    )
    return {row.document_id: row for row in rows}


async def passages_on_page(session: AsyncSession, document_id: str, page: int) -> list[PassageRow]:
    """A document's passages on one page, in order (to show a cited passage; the caller checked
    that it may see the document)."""
    rows = await _passages_where(
        session, Case.id == Document.case_id, Passage.document_id == document_id, Passage.page == page
    )
    return sorted(rows, key=lambda row: row.passage_index)


async def vanished_passages(session: AsyncSession, ids: Sequence[int]) -> list[int]:
    """Those of `ids` that no longer exist (a passage of a hidden matter still does)."""
    if not ids:
        return []
    existing = set(await session.scalars(select(Passage.id).where(Passage.id.in_(list(ids)))))
    return [i for i in ids if i not in existing]


_PASSAGES_FTS = table("passages_fts", column("rowid"))


async def fulltext_passages(
    session: AsyncSession,
    words: list[str],
    *,
    limit: int,
    visible: ColumnElement[bool],
    case_id: str | None = None,
) -> list[int]:
    """Ids of passages containing any of `words` (stemmed) in cases the caller may see
    (`visible`) and documents not in the trash, best first: BM25 on SQLite, cover density on
    PostgreSQL; passages with more (and rarer) words rank higher. The access rule is part of the
    query, so hidden matters never take the places of visible ones."""
    if not words:
        return []
    conditions: list[ColumnElement[bool]] = [visible, document_not_trashed()]
    if case_id is not None:
        conditions.append(Passage.case_id == case_id)
    statement: Select[Any]
    if dialect_name(session) == "postgresql":
        tsquery = func.to_tsquery("english", " | ".join(words))
        search_vector: ColumnElement[Any] = literal_column("passages.search_vector")
        statement = (
            select(Passage.id)
            .join(Document, Document.id == Passage.document_id)
            .join(Case, Case.id == Passage.case_id)
            .where(search_vector.bool_op("@@")(tsquery), *conditions)
            .order_by(func.ts_rank_cd(search_vector, tsquery).desc(), Passage.id)
        )
    else:
        statement = (
            select(_PASSAGES_FTS.c.rowid)
            .join(Passage, Passage.id == _PASSAGES_FTS.c.rowid)
            .join(Document, Document.id == Passage.document_id)
            .join(Case, Case.id == Passage.case_id)
            .where(
                text("passages_fts MATCH :fts_query").bindparams(
                    fts_query=" OR ".join(f'"{word}"' for word in words)
                ),
                *conditions,
            )
            .order_by(text("bm25(passages_fts)"), _PASSAGES_FTS.c.rowid)
        )
    return [int(r[0]) for r in (await session.execute(statement.limit(limit))).all()]


@dataclass(frozen=True)
class DocumentTitleRow:
    id: str
    title: str
    case_id: str


async def documents_by_title(
    session: AsyncSession, words: list[str], *, limit: int, visible: ColumnElement[bool]
) -> list[DocumentTitleRow]:
    """Documents whose title contains every word (case-insensitive substring), in cases the
    caller may see (`visible`), newest first."""
    if not words:
        return []
    title = func.lower(Document.title)
    statement = (
        select(Document.id, Document.title, Document.case_id)
        .join(Case, Case.id == Document.case_id)
        .where(visible, document_not_trashed(), *(title.contains(word, autoescape=True) for word in words))
        .order_by(Document.uploaded_at.desc(), Document.id.desc())
        .limit(limit)
    )
    return [DocumentTitleRow(*r) for r in (await session.execute(statement)).all()]


async def cases_matching(
    session: AsyncSession, words: list[str], *, limit: int, visible: ColumnElement[bool]
) -> list[Case]:
    """Cases the caller may see (`visible`) matching every word as a prefix (the case list's own
    full-text condition), most recently updated first; the service ranks them."""
    if not words:
        return []
    statement = (
        select(Case)
        .where(await search_condition(session, words), visible)
        .order_by(Case.updated_at.desc(), Case.id.desc())
        .limit(limit)
    )
    return list((await session.scalars(statement)).all())


@dataclass(frozen=True)
class CasePassages:
    passages: list[PassageRow]
    vectors: Vectors


async def case_passages(session: AsyncSession, case_id: str) -> CasePassages:
    """Every passage of a case's documents with its embedding: asking a question ranks them all."""
    statement = (
        select(*_PASSAGE_COLUMNS, Passage.embedding)
        .join(Document, Document.id == Passage.document_id)
        .where(Passage.case_id == case_id, Document.case_id == case_id, document_not_trashed())
        .order_by(Passage.id)
    )
    import numpy as np  # the `casefile[ai]` extra: asking is refused without it (search.service)

    rows = (await session.execute(statement)).all()
    passages = [_passage(row[:-1]) for row in rows]
    blob = b"".join(bytes(row[-1]) for row in rows)
    vectors = np.frombuffer(blob, dtype="<f4").astype(np.float32).reshape(len(rows), EMBEDDING_DIM)
    return CasePassages(passages, vectors)
