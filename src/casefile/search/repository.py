"""Passage storage and the search queries, for SQLite and PostgreSQL.

Passages (`document_chunks`) are written only here: the pipeline replaces a document's passages
in its own transaction; deleting a document cascades in the database. Full text over passages uses
PostgreSQL's generated `search_vector` (english) with its GIN index, or SQLite's FTS5
`document_chunks_fts` (porter); words come from `casefile.listing.search_words`, so they are
letters and digits only and safe inside both query syntaxes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sqlalchemy import delete, func, insert, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.ai.models import DocumentChunk
from casefile.ai.types import EMBEDDING_DIM, Chunk, Vectors
from casefile.cases.models import Case
from casefile.cases.repository import search_condition
from casefile.clock import utcnow
from casefile.db import dialect_name
from casefile.documents.models import Document


def database_key(session: AsyncSession) -> str:
    """Names the database a session talks to (the vector index registry's key)."""
    return session.get_bind().engine.url.render_as_string(hide_password=True)


async def replace_document_chunks(
    session: AsyncSession, *, document_id: str, case_id: str, chunks: list[Chunk], vectors: Vectors
) -> None:
    """Delete the document's passages and insert `chunks` with their `vectors` (one L2-normalised
    row each), in the caller's transaction."""
    if len(chunks) != len(vectors) or (len(chunks) and vectors.shape[1] != EMBEDDING_DIM):
        raise ValueError(f"{len(chunks)} chunks but vectors of shape {vectors.shape}")
    await delete_document_chunks(session, document_id)
    if not chunks:
        return
    matrix = np.ascontiguousarray(vectors, dtype="<f4")
    now = utcnow()
    rows = [
        {
            "document_id": document_id,
            "case_id": case_id,
            "chunk_index": chunk.index,
            "page": chunk.page,
            "start": chunk.start,
            "end": chunk.end,
            "text": chunk.text,
            "embedding": matrix[i].tobytes(),
            "created_at": now,
        }
        for i, chunk in enumerate(chunks)
    ]
    await session.execute(insert(DocumentChunk), rows)


async def delete_document_chunks(session: AsyncSession, document_id: str) -> None:
    await session.execute(delete(DocumentChunk).where(DocumentChunk.document_id == document_id))


# ---- the vector index's reads --------------------------------------------------------------------


async def vectors_after(session: AsyncSession, after_id: int, limit: int) -> list[tuple[int, str, bytes]]:
    """(id, document_id, embedding) of passages with id > `after_id`, by id."""
    statement = (
        select(DocumentChunk.id, DocumentChunk.document_id, DocumentChunk.embedding)
        .where(DocumentChunk.id > after_id)
        .order_by(DocumentChunk.id)
        .limit(limit)
    )
    return [(int(r[0]), str(r[1]), bytes(r[2])) for r in (await session.execute(statement)).all()]


async def passage_count(session: AsyncSession) -> int:
    return int(await session.scalar(select(func.count()).select_from(DocumentChunk)) or 0)


async def passage_keys(session: AsyncSession) -> list[tuple[int, str]]:
    """(id, document_id) of every passage: what the index compares itself against."""
    rows = await session.execute(select(DocumentChunk.id, DocumentChunk.document_id))
    return [(int(r[0]), str(r[1])) for r in rows.all()]


async def vectors_of(session: AsyncSession, ids: Sequence[int]) -> list[tuple[int, str, bytes]]:
    statement = select(DocumentChunk.id, DocumentChunk.document_id, DocumentChunk.embedding).where(
        DocumentChunk.id.in_(list(ids))
    )
    return [(int(r[0]), str(r[1]), bytes(r[2])) for r in (await session.execute(statement)).all()]


# ---- search --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PassageRow:
    id: int
    document_id: str
    document_title: str
    case_id: str
    chunk_index: int
    page: int
    start: int
    end: int
    text: str


_PASSAGE_COLUMNS = (
    DocumentChunk.id,
    DocumentChunk.document_id,
    Document.title,
    DocumentChunk.case_id,
    DocumentChunk.chunk_index,
    DocumentChunk.page,
    DocumentChunk.start,
    DocumentChunk.end,
    DocumentChunk.text,
)


def _passage(row: Sequence[object]) -> PassageRow:
    return PassageRow(*row)  # type: ignore[arg-type]


async def passages_by_ids(session: AsyncSession, ids: Sequence[int]) -> dict[int, PassageRow]:
    """The passages that still exist among `ids`, with their document's title."""
    if not ids:
        return {}
    statement = (
        select(*_PASSAGE_COLUMNS)
        .join(Document, Document.id == DocumentChunk.document_id)
        .where(DocumentChunk.id.in_(list(ids)))
    )
    return {row[0]: _passage(row) for row in (await session.execute(statement)).all()}


async def first_passages(session: AsyncSession, document_ids: Sequence[str]) -> dict[str, PassageRow]:
    """Each document's first passage (for hits that matched on the title alone)."""
    if not document_ids:
        return {}
    statement = (
        select(*_PASSAGE_COLUMNS)
        .join(Document, Document.id == DocumentChunk.document_id)
        .where(DocumentChunk.document_id.in_(list(document_ids)), DocumentChunk.chunk_index == 0)
    )
    return {row[1]: _passage(row) for row in (await session.execute(statement)).all()}


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
            "SELECT id FROM document_chunks, to_tsquery('english', :query) AS q "
            "WHERE search_vector @@ q AND (CAST(:case_id AS varchar) IS NULL OR case_id = :case_id) "
            "ORDER BY ts_rank_cd(search_vector, q) DESC, id LIMIT :limit"
        )
    else:
        query = " OR ".join(f'"{word}"' for word in words)
        if case_id is None:
            statement = text(
                "SELECT rowid FROM document_chunks_fts WHERE document_chunks_fts MATCH :query "
                "ORDER BY rank, rowid LIMIT :limit"
            )
        else:
            statement = text(
                "SELECT f.rowid FROM document_chunks_fts AS f JOIN document_chunks AS c ON c.id = f.rowid "
                "WHERE document_chunks_fts MATCH :query AND c.case_id = :case_id "
                "ORDER BY bm25(document_chunks_fts), f.rowid LIMIT :limit"
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
        .where(*(title.contains(word, autoescape=True) for word in words))
        .order_by(Document.uploaded_at.desc(), Document.id.desc())
        .limit(limit)
    )
    return [DocumentTitleRow(*r) for r in (await session.execute(statement)).all()]


async def cases_matching(session: AsyncSession, words: list[str], *, limit: int) -> list[Case]:
    """Cases matching every word as a prefix (the case list's own full-text condition), most
    recently updated first; the service ranks them."""
    if not words:
        return []
    statement = (
        select(Case)
        .where(search_condition(session, words))
        .order_by(Case.updated_at.desc(), Case.id.desc())
        .limit(limit)
    )
    return list((await session.scalars(statement)).all())


async def case_exists(session: AsyncSession, case_id: str) -> bool:
    return await session.scalar(select(Case.id).where(Case.id == case_id)) is not None


@dataclass(frozen=True)
class CasePassages:
    passages: list[PassageRow]
    vectors: Vectors


async def case_passages(session: AsyncSession, case_id: str) -> CasePassages:
    """Every passage of a case's documents with its embedding: asking a question ranks them all."""
    statement = (
        select(*_PASSAGE_COLUMNS, DocumentChunk.embedding)
        .join(Document, Document.id == DocumentChunk.document_id)
        .where(DocumentChunk.case_id == case_id, Document.case_id == case_id)
        .order_by(DocumentChunk.id)
    )
    rows = (await session.execute(statement)).all()
    passages = [_passage(row[:-1]) for row in rows]
    blob = b"".join(bytes(row[-1]) for row in rows)
    vectors = np.frombuffer(blob, dtype="<f4").astype(np.float32).reshape(len(rows), EMBEDDING_DIM)
    return CasePassages(passages, vectors)
