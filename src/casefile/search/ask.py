"""Ask the case (`POST /cases/{id}/ask`): an answer made of the case's own sentences, verbatim and
cited, or none. No generative model, so nothing can be invented.

How: the case's passages are ranked as search ranks them (semantic similarity and full text,
fused by reciprocal rank); the best ASK_PASSAGES are split into sentences (the rules of
`casefile.nlp.sentences`); every sentence is scored by the similarity of its embedding (its
document's title before it, for context) to the question's, plus LEXICAL_BONUS x the share of the
question's words it holds, plus the adjustments of `casefile.nlp.answers` (the kind of fact asked
for, the event the question names, headings and restatements of the question). The best one to
MAX_ANSWER_SENTENCES sentences within ANSWER_MARGIN of the best answer; nothing scoring
ANSWER_MIN_SCORE or more: no answer.

The tuned constants, all here. They were chosen on tests/ai/quality (the synthetic set) and then on
the development part of tests/ai/real (issue 31); the locked test part is never used to choose
them (docs/research/bench-notes-2026-11.md, "AI quality on real documents").
"""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from casefile.audit import service as audit
from casefile.models import Case
from casefile.nlp.answers import (
    NAME_BONUS,
    answer_adjustment,
    asked_kinds,
    is_header_field,
    name_share,
    question_names,
)
from casefile.nlp.sentences import Span, split_sentences
from casefile.nlp.types import Page
from casefile.nlp.words import WORD, split_words
from casefile.search import repository
from casefile.search.repository import PassageRow
from casefile.search.service import FloatArray, embed, query_words, rrf
from casefile.search.snippets import same_word

# How many passages answers are looked for in, and how many full-text candidates are fused.
ASK_PASSAGES = 6
ASK_TEXT_CANDIDATES = 50
# A passage below this cosine similarity to the question (all-MiniLM-L6-v2) is not a semantic
# candidate (it may still come in by its words).
ASK_PASSAGE_MIN_SIMILARITY = 0.20
# A sentence must score this much to be an answer: on the synthetic set answerable questions scored
# 0.51-0.95, unrelated ones at most 0.36.
ANSWER_MIN_SCORE = 0.45
ANSWER_MARGIN = 0.10  # further answer sentences score within this of the best
MAX_ANSWER_SENTENCES = 3
LEXICAL_BONUS = 0.10  # times the share of the question's words a sentence contains
MAX_SENTENCES_EMBEDDED = 60  # sentences scored per question (each is embedded on the server)


def _answerable(sentence: str) -> bool:
    """A sentence that can answer something: four words or more, not a heading in capitals, not a
    header or footer field."""
    return (
        len(WORD.findall(sentence)) >= 4
        and any(c.islower() for c in sentence)
        and not is_header_field(sentence)
    )


NOT_GROUNDED = "No passage in this case's documents supports an answer to this question, so none is given."
NOTHING_PROCESSED = "This case has no processed documents to answer from."


def _not_grounded(question: str, message: str) -> dict[str, Any]:
    return {
        "question": question,
        "answer": {"text": None, "sentences": []},
        "passages": [],
        "grounded": False,
        "message": message,
    }


def _merged_passages(ranked: list[tuple[PassageRow, float]]) -> list[dict[str, Any]]:
    """The passages an answer drew on, in rank order, with overlapping or adjacent passages of
    one page merged into one (so no sentence is shown twice); a merged passage keeps the best score."""
    merged: list[dict[str, Any]] = []
    for passage, score in ranked:
        for item in merged:
            same_page = item["document_id"] == passage.document_id and item["page"] == passage.page
            if same_page and passage.start <= item["end"] and item["start"] <= passage.end:
                if passage.start < item["start"]:
                    item["text"] = passage.text + item["text"][passage.end - item["start"] :]
                    item["start"] = passage.start
                if passage.end > item["end"]:
                    item["text"] += passage.text[item["end"] - passage.start :]
                    item["end"] = passage.end
                break
        else:
            merged.append(
                {
                    "document_id": passage.document_id,
                    "version": passage.version,
                    "document_title": passage.document_title,
                    "page": passage.page,
                    "start": passage.start,
                    "end": passage.end,
                    "text": passage.text,
                    "score": round(score, 6),
                }
            )
    return merged


def _scored(
    question: str, words: list[str], candidates: list[tuple[PassageRow, Span]], semantic: FloatArray
) -> list[tuple[float, int]]:
    """(score, candidate index) of every candidate sentence, best first."""
    distinct = set(words)
    kinds = asked_kinds(question)
    names = question_names(question)
    scored: list[tuple[float, int]] = []
    for n, (passage, sentence) in enumerate(candidates):
        tokens = set(split_words(sentence.text))
        shared = sum(1 for w in distinct if any(same_word(t, w) for t in tokens))
        bonus = LEXICAL_BONUS * shared / len(distinct) if distinct else 0.0
        # The event asked about is the one of the names the question gives: a sentence from a
        # passage (and document) that holds them beats one about another party's hearing.
        bonus += NAME_BONUS * name_share(names, f"{passage.document_title} {passage.text}")
        # A sentence stating the kind of fact asked for beats a heading that names the subject, and
        # one that only restates the question loses.
        bonus += answer_adjustment(question, sentence.text, kinds)
        scored.append((float(semantic[n]) + bonus, n))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return scored


async def ask(session: AsyncSession, case: Case, question: str) -> dict[str, Any]:
    """Answer from the passages of `case`, which the caller was checked to see. Recorded with
    the request's transaction (a POST): the question, and that the case's documents were read."""
    audit.record(
        session,
        "case.ask",
        resource_type="case",
        resource_id=case.id,
        case_id=case.id,
        details={"question": question},
    )
    return await _answer(session, case, question)


async def _answer(session: AsyncSession, case: Case, question: str) -> dict[str, Any]:
    case_id = case.id
    found = await repository.case_passages(session, case_id)
    if not found.passages:
        return _not_grounded(question, NOTHING_PROCESSED)
    words = query_words(question)
    query = (await embed([question]))[0]
    similarities = await asyncio.to_thread(lambda: found.vectors @ query)
    text_ids = await repository.fulltext_passages(
        session, words, limit=ASK_TEXT_CANDIDATES, visible=Case.id == case_id, case_id=case_id
    )

    position = {p.id: i for i, p in enumerate(found.passages)}
    scores: dict[int, float] = {}
    semantic_order = [int(i) for i in (-similarities).argsort(kind="stable")]
    for rank, i in enumerate(semantic_order, start=1):
        if similarities[i] < ASK_PASSAGE_MIN_SIMILARITY:
            break
        scores[i] = scores.get(i, 0.0) + rrf(rank)
    for rank, passage_id in enumerate(text_ids, start=1):
        if passage_id in position:
            i = position[passage_id]
            scores[i] = scores.get(i, 0.0) + rrf(rank)
    top = sorted(scores, key=lambda i: (-scores[i], i))[:ASK_PASSAGES]
    if not top:
        return _not_grounded(question, NOT_GROUNDED)

    candidates: list[tuple[PassageRow, Span]] = []
    placed: set[tuple[str, int, int]] = set()
    for i in top:
        passage = found.passages[i]
        # Offsets of these sentences are within the passage's text.
        for sentence in split_sentences(Page(passage.page, passage.text)):
            # Passages overlap by a sentence: each sentence of a document is a candidate once.
            where = (passage.document_id, passage.page, passage.start + sentence.start)
            if _answerable(sentence.text) and where not in placed:
                placed.add(where)
                candidates.append((passage, sentence))
    candidates = candidates[:MAX_SENTENCES_EMBEDDED]
    if not candidates:
        return _not_grounded(question, NOT_GROUNDED)
    # Each sentence is embedded after its document's title: out of context "The term ends on
    # June 1." says little, "Residential lease. The term ends on June 1." says what ends.
    sentence_vectors = await embed([f"{p.document_title}. {s.text}" for p, s in candidates])
    scored = _scored(question, words, candidates, sentence_vectors @ query)
    best = scored[0][0]
    if best < ANSWER_MIN_SCORE:
        return _not_grounded(question, NOT_GROUNDED)

    chosen: list[tuple[PassageRow, Span]] = []
    seen: set[str] = set()
    for score, n in scored:
        if len(chosen) == MAX_ANSWER_SENTENCES or score < max(ANSWER_MIN_SCORE, best - ANSWER_MARGIN):
            break
        passage, sentence = candidates[n]
        if sentence.text not in seen:
            seen.add(sentence.text)
            chosen.append((passage, sentence))
    sentences: list[dict[str, Any]] = [
        {
            "text": sentence.text,
            "document_id": passage.document_id,
            "version": passage.version,
            "page": passage.page,
            "start": passage.start + sentence.start,
            "end": passage.start + sentence.end,
        }
        for passage, sentence in chosen
    ]
    return {
        "question": question,
        "answer": {"text": " ".join(s["text"] for s in sentences), "sentences": sentences},
        "passages": _merged_passages([(found.passages[i], scores[i]) for i in top]),
        "grounded": True,
        "message": None,
    }
