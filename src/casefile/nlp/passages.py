"""A document cut into passages for search and answers: runs of whole sentences of one page."""

from __future__ import annotations

import re

from .sentences import Span
from .types import Page, TextPassage

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
