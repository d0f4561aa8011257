"""Search and "ask the case": the rules.

Search (`GET /search`) ranks four lists and fuses them with reciprocal rank fusion
(score = Σ 1 / (RRF_K + rank), rank from 1):

* cases matching every query word (the case list's own full-text condition), ranked by where the
  words occur (title and case number above client name above description);
* passages matching any query word in the passage full-text index (BM25 / cover density);
* passages whose embedding is similar to the query's (cosine ≥ SEMANTIC_MIN_SIMILARITY), so a
  document is found by words it does not contain but means;
* documents whose title contains every query word.

A document's score is its best passage's fused score, plus its title's. Stop words are dropped
from the full-text queries (the embedding sees the whole query). "Ask the case" is in ask.py.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from sqlalchemy import ColumnElement
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.access.matter import visible_to
from casefile.ai_extra import ai_installed, ai_missing_message
from casefile.audit import service as audit
from casefile.auth.permissions import Permission, Principal
from casefile.errors import AiUnavailable, ValidationFailed, permission_missing
from casefile.listing import MAX_SEARCH_WORDS
from casefile.models import Case
from casefile.nlp.words import content_words, split_words
from casefile.search import repository
from casefile.search.repository import PassageRow
from casefile.search.snippets import highlight, make_snippet, match_spans, same_word, word_coverage

if TYPE_CHECKING:  # numpy and the vector index need the `casefile[ai]` extra: imported where used
    import numpy as np
    import numpy.typing as npt

    from casefile.search.vector_index import Match

Kind = Literal["case", "document"]
FloatArray: TypeAlias = "npt.NDArray[np.float32]"

RRF_K = 60
CASE_CANDIDATES = 200
TEXT_CANDIDATES = 200
# Passages, not documents: a long opinion's passages may fill a short list, leaving out the document
# a paraphrase describes (issue 31, round 2: 100 -> 400 with TEXT_COVERAGE_POWER, chosen on the
# development part of tests/ai/real).
SEMANTIC_CANDIDATES = 400
TITLE_CANDIDATES = 100
# Cosine similarity (all-MiniLM-L6-v2) of query and passage below which a passage is not a
# semantic hit. Tuned on tests/ai/quality and tests/search/quality (see docs/research/bench-notes-2026-11.md
# "Search over passages"): related query/passage pairs score 0.30-0.70, unrelated ones below 0.20.
# Kept in issue 31's round 2: on real documents some paraphrases score only 0.20-0.30 against the passage that
# tells their subject, but unrelated queries reach 0.26 there too (0.20 would lift paraphrase
# recall@5 on the development part to 0.732, and show semantic hits for "weather forecast tomorrow").
SEMANTIC_MIN_SIMILARITY = 0.30
# A passage's full-text vote is weighted by the share of the query's words it holds, to this
# power: a paraphrase shares one or two ordinary words with many documents ("relief", "justices"),
# and such one-word hits outvoted the semantic ranking (1 -> 3 and 400 semantic candidates:
# paraphrase recall@5 0.589 -> 0.625 on the development part, literal queries unchanged at 0.990).
TEXT_COVERAGE_POWER = 3


def query_words(text: str) -> list[str]:
    """The query's words for full-text matching: its content words, at most MAX_SEARCH_WORDS."""
    return content_words(text)[:MAX_SEARCH_WORDS]


def rrf(rank: int) -> float:
    return 1.0 / (RRF_K + rank)


async def embed(texts: list[str]) -> FloatArray:
    """Embeddings, computed in a worker thread: never on the event loop."""

    def run() -> FloatArray:
        import numpy as np

        from casefile.nlp.embedder import get_embedder

        vectors: FloatArray = np.asarray(get_embedder().embed(texts), dtype=np.float32)
        return vectors

    return await asyncio.to_thread(run)


# ---- search --------------------------------------------------------------------------------------


@dataclass
class _DocumentHit:
    id: str
    title: str
    case_id: str
    score: float = 0.0
    passage: PassageRow | None = None
    passage_score: float = -1.0
    matched: set[str] = field(default_factory=set)


@dataclass
class _CaseHit:
    case: Case
    score: float


@dataclass(frozen=True)
class SearchPage:
    items: list[dict[str, Any]]
    total: int


CASE_FIELD_WEIGHTS = (("title", 3), ("case_number", 3), ("client_name", 2), ("description", 1))


def _case_relevance(case: Case, words: list[str]) -> int:
    """Each word counts the weight of the best field it occurs in."""
    tokens = {name: split_words(getattr(case, name) or "") for name, _ in CASE_FIELD_WEIGHTS}
    return sum(
        next((weight for name, weight in CASE_FIELD_WEIGHTS if any(same_word(t, w) for t in tokens[name])), 0)
        for w in words
    )


def _case_snippet(case: Case, words: list[str]) -> dict[str, Any]:
    best_name, best_count = "title", -1
    for name, _ in CASE_FIELD_WEIGHTS:
        count = len(match_spans(getattr(case, name) or "", words))
        if count > best_count:
            best_name, best_count = name, count
    snippet = make_snippet(getattr(case, best_name) or "", words)
    return {"text": snippet.text, "field": best_name, "start": snippet.start, "end": snippet.end}


def _passage_snippet(passage: PassageRow, words: list[str]) -> dict[str, Any]:
    snippet = make_snippet(passage.text, words, offset=passage.start)
    return {"text": snippet.text, "page": passage.page, "start": snippet.start, "end": snippet.end}


def check_search_permission(principal: Principal, kind: Kind | None) -> tuple[bool, bool]:
    """Which kinds of hit the caller may see: cases need read:cases, documents read:documents."""
    cases = principal.can(Permission.READ_CASES) and kind in (None, "case")
    documents = principal.can(Permission.READ_DOCUMENTS) and kind in (None, "document")
    if kind == "case" and not cases:
        raise permission_missing(Permission.READ_CASES)
    if kind == "document" and not documents:
        raise permission_missing(Permission.READ_DOCUMENTS)
    if not cases and not documents:
        raise permission_missing(f"{Permission.READ_CASES} or {Permission.READ_DOCUMENTS}")
    return cases, documents


async def search(
    session: AsyncSession, principal: Principal, q: str, *, kind: Kind | None, page: int, limit: int
) -> SearchPage:
    want_cases, want_documents = check_search_permission(principal, kind)
    q = q.strip()
    if not q:
        raise ValidationFailed.on("q", "Enter something to search for")
    words = query_words(q)
    visible = visible_to(principal)  # every query below leaves out the matters hidden from the caller
    case_hits: list[_CaseHit] = []
    if want_cases:
        case_hits = await _rank_cases(session, words, visible)
    document_hits: list[_DocumentHit] = []
    if want_documents:
        document_hits = await _rank_documents(session, q, words, visible)

    ranked: list[tuple[float, int, str, _CaseHit | _DocumentHit]] = [
        (hit.score, 0, hit.case.id, hit) for hit in case_hits
    ]
    ranked += [(hit.score, 1, hit.id, hit) for hit in document_hits]
    ranked.sort(key=lambda item: (-item[0], item[1], item[2]))
    chosen = [item[3] for item in ranked[(page - 1) * limit : page * limit]]

    title_only = [h.id for h in chosen if isinstance(h, _DocumentHit) and h.passage is None]
    first = await repository.first_passages(session, title_only, visible)
    items: list[dict[str, Any]] = []
    for hit in chosen:
        if isinstance(hit, _CaseHit):
            items.append(
                {
                    "kind": "case",
                    "id": hit.case.id,
                    "score": round(hit.score, 6),
                    "title": hit.case.title,
                    "case_number": hit.case.case_number,
                    "snippet": _case_snippet(hit.case, words),
                    "matched": ["text"],
                }
            )
            continue
        passage = hit.passage or first.get(hit.id)
        snippet = (
            _passage_snippet(passage, words)
            if passage is not None
            else {
                "text": highlight(hit.title, match_spans(hit.title, words)),
                "page": None,
                "start": None,
                "end": None,
            }
        )
        items.append(
            {
                "kind": "document",
                "id": hit.id,
                "score": round(hit.score, 6),
                "title": hit.title,
                "case_id": hit.case_id,
                "version": passage.version if passage is not None else None,
                "snippet": snippet,
                "matched": sorted(hit.matched, key=("text", "semantic").index),
            }
        )
    details = {"in": "search", "q": q, "kind": kind, "page": page, "total": len(ranked)}
    await audit.record_read(session, "search.query", details=details)
    return SearchPage(items, len(ranked))


async def _rank_cases(
    session: AsyncSession, words: list[str], visible: ColumnElement[bool]
) -> list[_CaseHit]:
    cases = await repository.cases_matching(session, words, limit=CASE_CANDIDATES, visible=visible)
    # Stable sort: equally relevant cases stay most recently updated first.
    cases.sort(key=lambda c: -_case_relevance(c, words))
    return [_CaseHit(case, rrf(rank)) for rank, case in enumerate(cases, start=1)]


async def _rank_documents(
    session: AsyncSession, q: str, words: list[str], visible: ColumnElement[bool]
) -> list[_DocumentHit]:
    text_ids = await repository.fulltext_passages(session, words, limit=TEXT_CANDIDATES, visible=visible)
    # Without the AI extra there is no model to embed the query: the passages are ranked by their
    # words alone (and no hit says `semantic`).
    matches = await _semantic_matches(session, q) if ai_installed() else []
    # The vector index holds every matter's passages: the query that loads the candidates applies
    # the access rule, so a hidden matter's passage is dropped here, before any score or count.
    rows = await repository.passages_by_ids(
        session, list({*text_ids, *(m.passage_id for m in matches)}), visible
    )
    not_loaded = [m.passage_id for m in matches if m.passage_id not in rows]
    if not_loaded:  # deleted since the index looked
        from casefile.search.vector_index import index_for

        index_for(session).discard(await repository.vanished_passages(session, not_loaded))

    passage_scores: dict[int, float] = {}
    matched: dict[int, set[str]] = {}
    for rank, passage_id in enumerate(text_ids, start=1):
        row = rows.get(passage_id)
        if row is None:
            continue
        # A passage holding one word of a long query is weak evidence: its full-text vote counts
        # in proportion to (a power of) the share of the query's words it holds.
        weight = word_coverage(row.text, words) ** TEXT_COVERAGE_POWER
        passage_scores[passage_id] = passage_scores.get(passage_id, 0.0) + weight * rrf(rank)
        matched.setdefault(passage_id, set()).add("text")
    rank = 0
    for match in matches:
        if match.passage_id in rows:
            rank += 1
            passage_scores[match.passage_id] = passage_scores.get(match.passage_id, 0.0) + rrf(rank)
            matched.setdefault(match.passage_id, set()).add("semantic")

    documents: dict[str, _DocumentHit] = {}
    for passage_id, score in passage_scores.items():
        passage = rows.get(passage_id)
        if passage is None:
            continue
        hit = documents.setdefault(
            passage.document_id, _DocumentHit(passage.document_id, passage.document_title, passage.case_id)
        )
        hit.matched |= matched[passage_id]
        if score > hit.passage_score:
            hit.passage, hit.passage_score = passage, score
    for hit in documents.values():
        hit.score = hit.passage_score
    titled = await repository.documents_by_title(session, words, limit=TITLE_CANDIDATES, visible=visible)
    for rank, document in enumerate(titled, start=1):
        hit = documents.setdefault(document.id, _DocumentHit(document.id, document.title, document.case_id))
        hit.score = max(hit.score, 0.0) + rrf(rank)
        hit.matched.add("text")
    return list(documents.values())


async def _semantic_matches(session: AsyncSession, q: str) -> list[Match]:
    from casefile.search.vector_index import index_for

    index = index_for(session)
    await index.catch_up(session)
    query = (await embed([q]))[0]
    return await asyncio.to_thread(
        index.search, query, k=SEMANTIC_CANDIDATES, min_similarity=SEMANTIC_MIN_SIMILARITY
    )


def require_models() -> None:
    """Asking (search/ask.py) runs the embedding model in this process: refused where the
    `casefile[ai]` extra is not installed."""
    if not ai_installed():
        raise AiUnavailable(f"Asking needs the local models: {ai_missing_message()}")
