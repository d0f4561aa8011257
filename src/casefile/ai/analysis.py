"""Text analysis that needs no entity rules: sentence segmentation (with offsets), the extractive
summary, language, word count and keywords.

Every sentence is a `Span` into one page's text, so whatever is shown to a user can be traced to
`pages[page - 1].text[start:end]`.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from casefile.ai.types import Page, Vectors


@dataclass(frozen=True)
class Span:
    page: int
    start: int
    end: int
    text: str

    @property
    def words(self) -> int:
        return len(self.text.split())


# -- sentences ----------------------------------------------------------------------------------

# Abbreviations after which a period does not end a sentence (legal writing is full of them).
_ABBREVIATIONS = frozenset(
    [
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "hon",
        "jr",
        "sr",
        "st",
        "no",
        "nos",
        "v",
        "vs",
        "inc",
        "corp",
        "co",
        "ltd",
        "llc",
        "llp",
        "lp",
        "plc",
        "bros",
        "dept",
        "u.s",
        "u.s.c",
        "c.f.r",
        "f",
        "f.2d",
        "f.3d",
        "f.4th",
        "supp",
        "s.ct",
        "l.ed",
        "p.2d",
        "p.3d",
        "n.e",
        "n.e.2d",
        "n.e.3d",
        "n.w",
        "a.2d",
        "a.3d",
        "so",
        "cal",
        "tex",
        "fla",
        "ill",
        "mass",
        "gen",
        "civ",
        "proc",
        "ann",
        "stat",
        "code",
        "r",
        "p",
        "fed",
        "crim",
        "app",
        "evid",
        "cir",
        "e.g",
        "i.e",
        "cf",
        "al",
        "id",
        "etc",
        "art",
        "sec",
        "ch",
        "para",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "approx",
        "dkt",
        "ecf",
        "est",
        "bus",
        "l.p",
        "n.a",
        "p.c",
        "b.v",
        "a.m",
        "p.m",
    ]
)
_SENTENCE_END = re.compile(r"[.!?][\"'\u201d\u2019)\]]*(?=\s+[\"'\u201c\u2018(\[]?[A-Z0-9])")
_BLOCK_SPLIT = re.compile(r"\n[ \t]*\n+")
_SHORT_LINE = 60  # a line shorter than this is a heading, address or list line, not wrapped prose


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


def _lines_of_block(block: str, offset: int) -> list[tuple[int, int]]:
    """The block's pieces: short lines stand alone, long (wrapped) lines join the next line."""
    pieces: list[tuple[int, int]] = []
    start = 0
    position = 0
    for line in block.split("\n"):
        end_of_line = position + len(line)
        stripped = line.strip()
        if len(stripped) < _SHORT_LINE or stripped.endswith((".", ":", ";")):
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


_ENUMERATOR = re.compile(r"\(?(?:\d{1,3}|[a-z]|[ivx]{1,4})[.)]\)?[ \t]+")


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


# -- counts and language ------------------------------------------------------------------------

_WORD = re.compile(r"\S*[^\W_]\S*")  # what a word processor counts: "$18,600.00" is one word


def word_count(pages: list[Page]) -> int:
    return sum(len(_WORD.findall(p.text)) for p in pages)


@lru_cache(maxsize=1)
def _language_identifier() -> Any:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    # Normalised probabilities, so "unsure" can be a threshold; the model ships in the package.
    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def language(pages: list[Page]) -> str:
    """ISO 639-1 code, or "und" when there is too little text or the identifier is unsure."""
    sample = " ".join(p.text for p in pages)[:20_000]
    letters = sum(ch.isalpha() for ch in sample)
    if letters < 40:
        return "und"
    code, probability = _language_identifier().classify(sample)
    return str(code) if probability >= 0.5 else "und"


# -- summary ------------------------------------------------------------------------------------

MAX_SUMMARY_CANDIDATES = 150


def summary_candidates(sentences: list[Span]) -> list[Span]:
    """Sentences fit to stand in a summary: prose of a reasonable length, not headings, captions
    or signature lines."""
    result = []
    for span in sentences:
        words = span.words
        letters = [ch for ch in span.text if ch.isalpha()]
        if not 8 <= words <= 70 or len(letters) < 30:
            continue
        if sum(ch.isupper() for ch in letters) > 0.5 * len(letters):
            continue  # headings and captions are in capitals
        if span.text.rstrip()[-1:] not in ".!?\"')\u201d:" and words < 12:
            continue
        result.append(span)
    return result


def summary_size(candidate_count: int) -> int:
    if candidate_count <= 12:
        return 3
    return 4 if candidate_count <= 40 else 5


def select_summary(candidates: list[Span], vectors: Vectors, size: int) -> list[int]:
    """Indexes (in document order) of the summary sentences.

    LexRank-style centrality: a sentence's score is its mean cosine similarity to all the other
    candidates (a sentence that many others echo states what the document is about), plus a
    position prior because legal documents say what they are first (recitals, the relief sought,
    the holding). Redundancy is removed greedily (maximal marginal relevance): a sentence too
    close to one already chosen is skipped.
    """
    n = len(candidates)
    if n == 0:
        return []
    similarity = vectors @ vectors.T
    centrality = (similarity.sum(axis=1) - 1.0) / max(n - 1, 1)
    position = np.array([1.0 / (1.0 + i / 5.0) for i in range(n)], dtype=np.float32)
    score = centrality + 0.12 * position
    order = sorted(range(n), key=lambda i: (-float(score[i]), i))
    chosen: list[int] = []
    for i in order:
        if len(chosen) == size:
            break
        if all(float(similarity[i, j]) < 0.85 for j in chosen):
            chosen.append(i)
    return sorted(chosen)


def prefilter_candidates(candidates: list[Span]) -> list[Span]:
    """At most MAX_SUMMARY_CANDIDATES sentences to embed: the opening sentences plus those with the
    most frequent content words, so long documents stay cheap and the choice stays deterministic."""
    if len(candidates) <= MAX_SUMMARY_CANDIDATES:
        return candidates
    head = candidates[:40]
    frequencies = Counter(w for s in candidates for w in content_words(s.text))
    rest = sorted(
        range(40, len(candidates)),
        key=lambda i: (-sum(frequencies[w] for w in set(content_words(candidates[i].text))), i),
    )
    keep = sorted(rest[: MAX_SUMMARY_CANDIDATES - len(head)])
    return head + [candidates[i] for i in keep]


# -- keywords -----------------------------------------------------------------------------------

_STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "either",
        "every",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "may",
        "me",
        "might",
        "more",
        "most",
        "must",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "per",
        "same",
        "shall",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "upon",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "within",
        "without",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "hereby",
        "herein",
        "hereof",
        "hereto",
        "hereunder",
        "thereof",
        "therein",
        "thereto",
        "whereas",
        "whereof",
        "said",
        "such",
        "any",
        "each",
        "including",
        "include",
        "includes",
        "included",
        "pursuant",
        "following",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "first",
        "second",
        "third",
        "date",
        "dated",
        "day",
        "days",
        "month",
        "months",
        "year",
        "years",
        "time",
        "page",
        "section",
        "paragraph",
        "inc",
        "llc",
        "llp",
        "ltd",
        "corp",
        "co",
        "no",
        "re",
        "via",
        "dear",
        "sincerely",
        "regards",
        "truly",
        "yours",
        "very",
        "best",
        "mr",
        "mrs",
        "ms",
        "dr",
        "hon",
        "am",
        "pm",
    ]
)
_KEYWORD_TOKEN = re.compile(r"[A-Za-z][A-Za-z'-]*[A-Za-z]")


def content_words(text: str) -> list[str]:
    return [
        w for w in (t.lower() for t in _KEYWORD_TOKEN.findall(text)) if w not in _STOPWORDS and len(w) > 2
    ]


def keyword_candidates(pages: list[Page], limit: int = 60) -> list[str]:
    """Frequent one- and two-word phrases of content words (no stop word inside a phrase, no
    number), ranked by frequency times length so that "security deposit" beats "security"."""
    counts: Counter[str] = Counter()
    for page in pages:
        for line in re.split(r"[.;:,()\n\"]+", page.text):
            tokens = [t.lower() for t in _KEYWORD_TOKEN.findall(line)]
            for i, token in enumerate(tokens):
                if token in _STOPWORDS or len(token) < 3:
                    continue
                counts[token] += 1
                if i + 1 < len(tokens) and tokens[i + 1] not in _STOPWORDS and len(tokens[i + 1]) > 2:
                    counts[f"{token} {tokens[i + 1]}"] += 1
    scored = [(count * (1.6 if " " in phrase else 1.0), phrase) for phrase, count in counts.items()]
    scored = [item for item in scored if item[0] >= 1.6 or len(counts) < 40]
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [phrase for _, phrase in scored[:limit]]


def select_keywords(candidates: list[str], vectors: Vectors, document: Vectors, size: int = 8) -> list[str]:
    """Embedding-based keyphrase choice (as KeyBERT does): the candidates closest to the document's
    own embedding, with maximal marginal relevance so that near-synonyms are not all chosen."""
    if not candidates:
        return []
    relevance = vectors @ document
    chosen: list[int] = []
    remaining = list(range(len(candidates)))
    while remaining and len(chosen) < size:

        def mmr(i: int) -> tuple[float, int]:
            redundancy = max((float(vectors[i] @ vectors[j]) for j in chosen), default=0.0)
            return (-(0.7 * float(relevance[i]) - 0.3 * redundancy), i)

        best = min(remaining, key=mmr)
        chosen.append(best)
        remaining.remove(best)
    # A one-word keyword already inside a chosen phrase adds nothing.
    words = [candidates[i] for i in chosen]
    return [w for w in words if not any(w != other and w in other.split() for other in words)]
