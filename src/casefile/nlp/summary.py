"""The extractive summary of a document: which of its sentences stand for it."""

from __future__ import annotations

from collections import Counter

import numpy as np

from .sentences import Span
from .types import Vectors
from .words import content_words

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
