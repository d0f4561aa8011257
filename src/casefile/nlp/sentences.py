"""Sentence segmentation, with offsets: the one splitter for summaries, passages and answers.

Every sentence is a `Span` into one page's text, so whatever is shown to a user can be traced to
`pages[page - 1].text[start:end]`. A sentence ends at `.`, `!` or `?` (optionally followed by a
closing quote or bracket) before white space and a capital, digit, quote or bracket, or right
before a capitalised word after a word in lower case (sentences the extraction glued together), but
not after an abbreviation or an initial ("v.", "U.S.", "Mr.", "No.", "J."); a blank line ends one
too, and a short line (a heading, an address or signature line) stands alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .resources import word_set
from .types import Page


@dataclass(frozen=True)
class Span:
    page: int
    start: int
    end: int
    text: str

    @property
    def words(self) -> int:
        return len(self.text.split())


_ABBREVIATIONS = word_set("abbreviations")
# The second form is a sentence glued to the next by the text's extraction ("from time to
# time.”Oceanic Time Warner Cable will", "this Agreement.2.The Principal grants"): a word in lower
# case, its full stop, then a capitalised word (or a list number and one) with no space between.
_SENTENCE_END = re.compile(
    r"[.!?][\"'\u201d\u2019)\]]*(?=\s+[\"'\u201c\u2018(\[]?[A-Z0-9])"
    r"|(?<=[a-z])[.!?][\"'\u201d\u2019]*(?=(?:\d{1,3}\.)?[A-Z][a-z])"
)
_BLOCK_SPLIT = re.compile(r"\n[ \t]*\n+")
_SHORT_LINE = 60  # a line shorter than this is a heading, address or list line, not wrapped prose
_PROSE_MIN_CHARS = 45


def _is_abbreviation(text: str, dot: int) -> bool:
    if text[dot] != ".":
        return False
    if re.fullmatch(r"\s*\(?(?:\d{1,3}|[A-Za-z]|[ivxIVX]{1,4})\)?", text[:dot]):
        return True  # a list enumerator ("1. Premises"), not the end of a sentence
    match = re.search(r"([A-Za-z][A-Za-z.0-9]*)$", text[:dot])
    if match is None:
        return False
    word = match.group(1).lower()
    # A single letter before a period is an initial ("John A. Smith"), never a sentence end here.
    return len(word) == 1 or word in _ABBREVIATIONS


# A short line still goes on into the next when it ends on a word that must (a comma, "and", "of",
# "was", a hyphen) or the next line starts in lower case: prose wrapped in a narrow column ("plaintiff
# Roger Mortimer was\nacquitted at 11:45 a.m."), not a heading or an address line.
_GOES_ON = re.compile(
    r"(?:[,\-\u2013]|\b(?i:and|or|of|the|a|an|to|in|on|at|by|for|with|from|that|was|were|is|are|be|been|has|have|had|not))$"
)


def _wrapped(line: str, following: str | None, full: int = _SHORT_LINE) -> bool:
    stripped = line.strip()
    if re.search(r"(?:^|\s)[A-Z]\.$", stripped) and following and following.strip()[:1].isupper():
        return True  # a name broken after its initial: "Justin W.\nClark"
    if stripped.endswith((".", ":", ";")):
        return False
    if len(stripped) >= full:
        return True
    if following is None or not following.strip():
        return False
    return bool(_GOES_ON.search(stripped)) or following.strip()[:1].islower()


def _lines_of_block(block: str, offset: int) -> list[tuple[int, int]]:
    """The block's pieces: short lines stand alone, wrapped lines join the next line."""
    pieces: list[tuple[int, int]] = []
    start = 0
    position = 0
    lines = block.split("\n")
    # A narrow column (a court's opinion set at ~55 characters) wraps its prose short of
    # _SHORT_LINE: there a line is full at 80 % of the block's longest (blocks of prose only, whose
    # longest line has 45 characters or more: not address or counsel blocks).
    longest = max((len(line.strip()) for line in lines), default=0)
    full = min(_SHORT_LINE, int(0.8 * longest)) if longest >= _PROSE_MIN_CHARS else _SHORT_LINE
    for number, line in enumerate(lines):
        end_of_line = position + len(line)
        following = lines[number + 1] if number + 1 < len(lines) else None
        if not _wrapped(line, following, full):
            pieces.append((offset + start, offset + end_of_line))
            start = end_of_line + 1
        position = end_of_line + 1
    if start < len(block):
        pieces.append((offset + start, offset + len(block)))
    return pieces


def split_sentences(page: Page) -> list[Span]:
    """Sentences and stand-alone lines of a page, each trimmed of surrounding whitespace."""
    text = page.text
    spans: list[Span] = []
    block_start = 0
    for match in [*_BLOCK_SPLIT.finditer(text), None]:
        block_end = match.start() if match else len(text)
        for start, end in _lines_of_block(text[block_start:block_end], block_start):
            spans.extend(_sentences_in(page.number, text, start, end))
        block_start = match.end() if match else len(text)
    return spans


def _sentences_in(page: int, text: str, start: int, end: int) -> list[Span]:
    piece = text[start:end]
    cuts = [m.end() for m in _SENTENCE_END.finditer(piece) if not _is_abbreviation(piece, m.start())]
    result = []
    previous = 0
    for cut in [*cuts, len(piece)]:
        span = _trimmed(page, text, start + previous, start + cut)
        if span is not None:
            result.append(span)
        previous = cut
    return result


_ENUMERATOR = re.compile(r"\(?(?:\d{1,3}|[a-z]|[ivx]{1,4})[.)]\)?[ \t]+|\d{1,3}\.(?=[A-Z][a-z])")


def _trimmed(page: int, text: str, start: int, end: int) -> Span | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    # A list number ("2. On July 10, ...") is numbering, not part of the sentence.
    enumerator = _ENUMERATOR.match(text, start, end)
    if enumerator and enumerator.end() < end:
        start = enumerator.end()
    return Span(page, start, end, text[start:end]) if end > start else None
