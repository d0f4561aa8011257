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

import numpy as np
from sqlalchemy import ColumnElement, delete, func, insert, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.cases.models import Case
from casefile.cases.repository import search_condition
from casefile.clock import utcnow
from casefile.db import dialect_name
from casefile.documents.models import Document, not_trashed
from casefile.nlp.types import EMBEDDING_DIM, TextPassage, Vectors
from casefile.search.models import Passage


def database_key(session: AsyncSession) -> str:
    """Names the database a session talks to (the vector index registry's key)."""
    return session.get_bind().engine.url.render_as_string(hide_password=True)


async def replace_passages(
    session: AsyncSession, *, document_id: str, case_id: str, passages: list[TextPassage], vectors: Vectors
) -> None:
    """Delete the document's passages and insert `passages` with their `vectors` (one L2-normalised
    row each), in the caller's transaction."""
    if len(passages) != len(vectors) or (len(passages) and vectors.shape[1] != EMBEDDING_DIM):
        raise ValueError(f"{len(passages)} passages but vectors of shape {vectors.shape}")
    await session.execute(delete(Passage).where(Passage.document_id == document_id))
    if not passages:
        return
    matrix = np.ascontiguousarray(vectors, dtype="<f4")
    now = utcnow()
    rows = [
        {
            "document_id": document_id,
            "case_id": case_id,
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
)


def _passage(row: Sequence[object]) -> PassageRow:
    return PassageRow(*row)  # type: ignore[arg-type]


async def _passages_where(session: AsyncSession, *conditions: ColumnElement[bool]) -> list[PassageRow]:
    statement = (
        select(*_PASSAGE_COLUMNS)
        .join(Document, Document.id == Passage.document_id)
        .where(not_trashed(), *conditions)
    )
    return [_passage(row) for row in (await session.execute(statement)).all()]


async def passages_by_ids(session: AsyncSession, ids: Sequence[int]) -> dict[int, PassageRow]:
    """The passages among `ids` that still exist, of documents not in the trash, with their
    document's title."""
    if not ids:
        return {}
    return {row.id: row for row in await _passages_where(session, Passage.id.in_(list(ids)))}


async def missing_passages(session: AsyncSession, ids: Sequence[int]) -> set[int]:
    """Those of `ids` that no longer exist (their document was purged), unlike those of a trashed
    document: they stay in the vector index, for the document may be restored."""
    if not ids:
        return set()
    existing = await session.scalars(select(Passage.id).where(Passage.id.in_(list(ids))))
    return set(ids) - set(existing)


async def first_passages(session: AsyncSession, document_ids: Sequence[str]) -> dict[str, PassageRow]:
    """Each document's first passage (for hits that matched on the title alone)."""
    if not document_ids:
        return {}
    rows = await _passages_where(
        session, Passage.document_id.in_(list(document_ids)), Passage.passage_index == 0
    )
    return {row.document_id: row for row in rows}


async def fulltext_passages(
    session: AsyncSession, words: list[str], *, limit: int, case_id: str | None = None
) -> list[int]:
    """Ids of passages containing any of `words` (stemmed), best first: BM25 on SQLite,
    cover density on PostgreSQL; passages with more (and rarer) words rank higher."""
    if not words:
        return []
    if dialect_name(session) == "postgresql":
        query = " | ".join(words)
        statement = text(
            "SELECT id FROM passages, to_tsquery('english', :query) AS q "
            "WHERE search_vector @@ q AND (CAST(:case_id AS varchar) IS NULL OR case_id = :case_id) "
            "ORDER BY ts_rank_cd(search_vector, q) DESC, id LIMIT :limit"
        )
    else:
        query = " OR ".join(f'"{word}"' for word in words)
        if case_id is None:
            statement = text(
                "SELECT rowid FROM passages_fts WHERE passages_fts MATCH :query "
                "ORDER BY rank, rowid LIMIT :limit"
            )
        else:
            statement = text(
                "SELECT f.rowid FROM passages_fts AS f JOIN passages AS c ON c.id = f.rowid "
                "WHERE passages_fts MATCH :query AND c.case_id = :case_id "
                "ORDER BY bm25(passages_fts), f.rowid LIMIT :limit"
            )
    params: dict[str, object] = {"query": query, "limit": limit, "case_id": case_id}
    return [int(r[0]) for r in (await session.execute(statement, params)).all()]


@dataclass(frozen=True)
class DocumentTitleRow:
    id: str
    title: str
    case_id: str


async def documents_by_title(
    session: AsyncSession, words: list[str], *, limit: int
) -> list[DocumentTitleRow]:
    """Documents whose title contains every word (case-insensitive substring), newest first."""
    if not words:
        return []
    title = func.lower(Document.title)
    statement = (
        select(Document.id, Document.title, Document.case_id)
        .where(not_trashed(), *(title.contains(word, autoescape=True) for word in words))
        .order_by(Document.uploaded_at.desc(), Document.id.desc())
        .limit(limit)
    )
    return [DocumentTitleRow(*r) for r in (await session.execute(statement)).all()]


async def cases_matching(
    session: AsyncSession, words: list[str], *, visible: ColumnElement[bool], limit: int
) -> list[Case]:
    """Cases matching every word as a prefix (the case list's own full-text condition) among the
    `visible` ones (cases.access.visible_to), most recently updated first; the service ranks them."""
    if not words:
        return []
    statement = (
        select(Case)
        .where(search_condition(session, words), visible)
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
        .where(Passage.case_id == case_id, Document.case_id == case_id, not_trashed())
        .order_by(Passage.id)
    )
    rows = (await session.execute(statement)).all()
    passages = [_passage(row[:-1]) for row in rows]
    blob = b"".join(bytes(row[-1]) for row in rows)
    vectors = np.frombuffer(blob, dtype="<f4").astype(np.float32).reshape(len(rows), EMBEDDING_DIM)
    return CasePassages(passages, vectors)
