"""A document cut into passages for search and answers: runs of whole sentences of one page."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from .sentences import Span
from .types import EMBEDDING_DIM, Page, TextPassage, Vectors

PASSAGE_MIN_WORDS = 120
PASSAGE_MAX_WORDS = 200
OVERLAP_MAX_WORDS = 40  # the last sentence of a passage starts the next one when it is this short

_TOKEN = re.compile(r"\S+")  # what `Span.words` counts


def make_passages(pages: list[Page], sentences: list[Span]) -> list[TextPassage]:
    """Passages of ~PASSAGE_MIN_WORDS..PASSAGE_MAX_WORDS words, made of whole sentences of one page;
    a short last sentence is repeated at the start of the next passage (overlap). A sentence longer
    than the maximum is cut at word boundaries."""
    passages: list[TextPassage] = []
    by_page: dict[int, list[Span]] = {}
    for span in sentences:
        for piece in _split_long(pages[span.page - 1], span):
            by_page.setdefault(piece.page, []).append(piece)
    for number in sorted(by_page):
        _passages_of_page(pages[number - 1], by_page[number], passages)
    return passages


def _passages_of_page(page: Page, spans: list[Span], passages: list[TextPassage]) -> None:
    group: list[Span] = []
    words = 0
    for span in spans:
        if group and words + span.words > PASSAGE_MAX_WORDS:
            _emit(page, group, passages)
            last = group[-1]
            group, words = ([last], last.words) if last.words <= OVERLAP_MAX_WORDS else ([], 0)
        group.append(span)
        words += span.words
        if words >= PASSAGE_MIN_WORDS:
            _emit(page, group, passages)
            last = group[-1]
            group, words = (
                ([last], last.words) if last.words <= OVERLAP_MAX_WORDS and span is not spans[-1] else ([], 0)
            )
    if group and not (passages and passages[-1].page == page.number and passages[-1].end >= group[-1].end):
        _emit(page, group, passages)


def _emit(page: Page, group: list[Span], passages: list[TextPassage]) -> None:
    start, end = group[0].start, group[-1].end
    passages.append(
        TextPassage(index=len(passages), page=page.number, start=start, end=end, text=page.text[start:end])
    )


def _split_long(page: Page, span: Span) -> list[Span]:
    if span.words <= PASSAGE_MAX_WORDS:
        return [span]
    pieces = []
    words = [(m.start(), m.end()) for m in _TOKEN.finditer(page.text, span.start, span.end)]
    step = (PASSAGE_MIN_WORDS + PASSAGE_MAX_WORDS) // 2
    for i in range(0, len(words), step):
        start, end = words[i][0], words[min(i + step, len(words)) - 1][1]
        pieces.append(Span(span.page, start, end, page.text[start:end]))
    return pieces


# How much the document's title weighs in each passage's vector, against the passage's sentences
# (their mean, by words, has weight 1). Before issue 31 the title was embedded with each passage's
# text ("title\npassage"); chosen on the development part of tests/ai/real.
TITLE_WEIGHT = 0.3


def passage_vectors(
    passages: list[TextPassage],
    sentences: list[Span],
    sentence_vectors: Vectors,
    title_vector: Vectors | None,
    embed: Callable[[list[str]], Vectors],
) -> Vectors:
    """A vector per passage from the vectors of its sentences, embedded once for the whole document
    (issue 31: passages, summary and keywords used to embed the same sentences again): the mean of
    its sentences' vectors weighted by their words, plus TITLE_WEIGHT x the title's, normalised. A
    passage holding no whole sentence (a piece of a sentence too long for one passage) is embedded
    itself. A sentence's vector may be zero (one too short to be embedded): it then weighs nothing."""
    by_page: dict[int, list[int]] = {}
    for i, span in enumerate(sentences):
        by_page.setdefault(span.page, []).append(i)
    rows = np.zeros((len(passages), EMBEDDING_DIM), dtype=np.float32)
    alone: list[int] = []
    for n, passage in enumerate(passages):
        inside = [
            i
            for i in by_page.get(passage.page, [])
            if passage.start <= sentences[i].start and sentences[i].end <= passage.end
        ]
        weights = np.array([sentences[i].words for i in inside], dtype=np.float32)
        weights = weights * sentence_vectors[inside].any(axis=1)
        if not inside or not weights.any():
            alone.append(n)
            continue
        rows[n] = (weights[:, None] * sentence_vectors[inside]).sum(axis=0) / weights.sum()
    if alone:
        rows[alone] = embed([passages[n].text for n in alone])
    if title_vector is not None:
        rows = rows + TITLE_WEIGHT * title_vector.reshape(1, -1)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    result: Vectors = (rows / np.maximum(norms, 1e-12)).astype(np.float32)
    return result
