"""Keywords: the phrases a document is about, chosen among its frequent phrases by embedding."""

from __future__ import annotations

import re
from collections import Counter

from .resources import word_set
from .types import Page, Vectors
from .words import STOP_WORDS

_NOT_KEYWORDS = STOP_WORDS | word_set("boilerplate_words")
_PHRASE_BREAK = re.compile(r"[.;:,()\n\"]+")  # a phrase never spans punctuation
# The words of a keyphrase keep their inner apostrophes and hyphens ("mechanic's lien",
# "non-compete", not "non compete"), and have no digits: a number is never part of a keyword.
_PHRASE_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*[A-Za-z]")


def _keyword_word(word: str) -> bool:
    return len(word) > 2 and word not in _NOT_KEYWORDS


# Candidates embedded per document: the 8 keywords are chosen among the most frequent phrases,
# which this many cover; each candidate costs an embedding (60 until issue 31: a fifth of a
# document's processing time for candidates far down the frequency list).
MAX_CANDIDATES = 40


def keyword_candidates(pages: list[Page], limit: int = MAX_CANDIDATES) -> list[str]:
    """Frequent one- and two-word phrases of content words (no stop word inside a phrase, no
    number), ranked by frequency times length so that "security deposit" beats "security"."""
    counts: Counter[str] = Counter()
    for page in pages:
        for line in _PHRASE_BREAK.split(page.text):
            tokens = [word.lower() for word in _PHRASE_WORD.findall(line)]
            for i, token in enumerate(tokens):
                if not _keyword_word(token):
                    continue
                counts[token] += 1
                if i + 1 < len(tokens) and _keyword_word(tokens[i + 1]):
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
    phrases = [candidates[i] for i in chosen]
    return [p for p in phrases if not any(p != other and p in other.split() for other in phrases)]
