"""What a document is written in and how long it is: its language and its word count."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from .types import Page
from .words import WORD


def word_count(pages: list[Page]) -> int:
    """What a word processor counts: every run of non-space characters holding a letter or digit,
    so "$18,600.00" is one word."""
    return sum(1 for page in pages for token in page.text.split() if WORD.search(token))


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
