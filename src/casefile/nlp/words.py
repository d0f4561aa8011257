"""Words: the one definition of a word (a run of letters and digits), the stop words, and the
content words of a text.

Search splits words the same way (the full-text queries of `casefile.listing` and `search/`), so
"2026-000123" or "O'Brien" match whatever punctuation the user types, and a word is always safe
inside both databases' full-text query syntax.
"""

from __future__ import annotations

import re
import unicodedata

from .resources import word_set

WORD = re.compile(r"[^\W_]+")
STOP_WORDS = word_set("stop_words")


def split_words(text: str) -> list[str]:
    """The words of `text`, NFKC-normalised (full-width letters are plain letters, a ligature is
    its letters) and lower-cased, in order."""
    return WORD.findall(unicodedata.normalize("NFKC", text).lower())


def content_words(text: str) -> list[str]:
    """The words of `text` that carry meaning: lower-cased, in order, without stop words."""
    return [word for word in split_words(text) if word not in STOP_WORDS]
