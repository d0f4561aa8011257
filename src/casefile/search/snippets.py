"""Where a query's words occur in a text (`same_word`), and the highlighted snippet that shows them."""

from __future__ import annotations

import html
from collections.abc import Iterable
from dataclasses import dataclass

from casefile.nlp.words import WORD, split_words

SNIPPET_CHARS = 240
_SUFFIXES = ("ings", "ing", "ies", "ied", "es", "ed", "s", "ly")


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def same_word(token: str, word: str) -> bool:
    """`token` (lower case) is `word`, or starts with its stem: "payments" matches "payment",
    "evicted" matches "eviction", and a prefix typed for a case ("contr") matches "contract"."""
    stem = _stem(word)
    return token == word or (len(stem) >= 3 and token.startswith(stem))


def match_spans(text: str, words: list[str]) -> list[tuple[int, int]]:
    """Where the query's words occur in `text` (a word, or a word starting with its stem)."""
    if not words:
        return []
    return [
        (m.start(), m.end())
        for m in WORD.finditer(text)
        if any(same_word(m.group().lower(), w) for w in words)
    ]


def word_coverage(text: str, words: list[str]) -> float:
    """The share of the distinct query words that occur in `text` (1.0 for no words)."""
    distinct = set(words)
    if not distinct:
        return 1.0
    tokens = set(split_words(text))
    return sum(1 for w in distinct if w in tokens or any(same_word(t, w) for t in tokens)) / len(distinct)


def highlight(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """`text` HTML-escaped, with the spans wrapped in <mark> (the only markup in the result)."""
    out: list[str] = []
    position = 0
    for start, end in spans:
        out.append(html.escape(text[position:start]))
        out.append(f"<mark>{html.escape(text[start:end])}</mark>")
        position = end
    out.append(html.escape(text[position:]))
    return "".join(out)


@dataclass(frozen=True)
class Snippet:
    text: str  # HTML: escaped, with <mark>
    start: int  # offsets of the shown window in the source text
    end: int


def make_snippet(text: str, words: list[str], *, offset: int = 0, size: int = SNIPPET_CHARS) -> Snippet:
    """The window of about `size` characters with the most query words, highlighted."""
    spans = match_spans(text, words)
    start = 0
    if spans:
        best = _densest_window(spans, size)
        start = max(0, spans[best][0] - size // 4)
        if start > 0:
            space = text.find(" ", start)
            start = space + 1 if 0 <= space < spans[best][0] else spans[best][0]
    end = min(len(text), start + size)
    if end < len(text):
        space = text.rfind(" ", start, end)
        end = space if space > start else end
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    inside = [(s - start, e - start) for s, e in spans if s >= start and e <= end]
    shown = highlight(text[start:end], inside)
    prefix = "… " if start > 0 else ""
    suffix = " …" if end < len(text) else ""
    return Snippet(prefix + shown + suffix, offset + start, offset + end)


def _densest_window(spans: list[tuple[int, int]], size: int) -> int:
    """The index of the match that starts the `size`-character window holding the most matches
    (the first such). Linear: `spans` are in order and do not overlap, so the window's end only
    moves forward (a text of thousands of matches must not stall the event loop)."""
    best, best_count, end = 0, 0, 0
    for i, (first, _) in enumerate(spans):
        end = max(end, i)
        while end < len(spans) and spans[end][1] <= first + size:
            end += 1
        if end - i > best_count:
            best, best_count = i, end - i
    return best
