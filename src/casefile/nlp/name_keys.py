"""Names as they are compared for conflict checks and contact search: a *key* per name.

Two spellings of one party ("ACME Corp.", "Acme Corporation"; "Road-Runner Holdings", "Roadrunner
Holdings"; "Müller GmbH", "Mueller"… up to the fuzzy score) should have keys that are equal or
close. The key is the name lower-cased (case-folded), without accents (NFKD, combining marks
dropped), with `&` as "and", inner periods, apostrophes and hyphens removed (so "L.L.C." is "llc"
and "O'Brien" is "obrien"), any other punctuation as a space, and without the words of
`data/name_match_noise.txt` (legal forms such as "Inc." or "GmbH", and "the"), the words in
alphabetical order. A name made only of such words keeps them, so "The Company" still has a key.

Before all that (once case-folded), letters that look alike are folded to one prototype (Unicode
TR39 skeletons, `disarm.skeleton_key`): "Acme" written with a Cyrillic A (U+0410) and c (U+0441) is "acme",
as are its full-width letters and "Ac\u200bme" with a zero-width space, so a look-alike spelling
cannot slip past a conflict check. Keys stored in the database are recomputed when this changes
(migration 0018).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from disarm import skeleton_key

from .resources import word_list

# Letters that NFKD does not take apart into a base letter and a mark.
_FOLDED = str.maketrans(
    {
        "\u00f8": "o",
        "\u00e6": "ae",
        "\u0153": "oe",
        "\u0142": "l",
        "\u0111": "d",
        "\u00f0": "d",
        "\u00fe": "th",
        "\u0131": "i",
    }
)
# Inner periods, apostrophes (straight, curly, modifier, acute, grave) and hyphens of every kind.
_JOINING = re.compile(r"[.'`\u00b4\u2018\u2019\u02bc\-\u2010\u2011\u2012\u2013\u00ad]")
_OTHER = re.compile(r"[^\w]+|_")


def _noise() -> tuple[frozenset[str], tuple[tuple[str, ...], ...]]:
    entries = [tuple(line.split()) for line in word_list("name_match_noise")]
    words = frozenset(e[0] for e in entries if len(e) == 1)
    # Longest first, so that "gmbh and co kg" goes whole rather than leaving "and kg".
    phrases = tuple(sorted((e for e in entries if len(e) > 1), key=len, reverse=True))
    return words, phrases


_NOISE_WORDS, _NOISE_PHRASES = _noise()


def name_words(name: str) -> list[str]:
    """The words of `name`, normalised (see the module's explanation), noise words included."""
    # Case-folded first: a skeleton tells "I" from "i" (capital I looks like l), and names match
    # whatever their case. Then look-alikes (the TR39 skeleton; invisible characters go), then
    # joining marks: NFKD would make a spacing acute accent (U+00B4) a space and a mark.
    text = unicodedata.normalize("NFKD", _JOINING.sub("", skeleton_key(name.casefold())))
    text = "".join(c for c in text if not unicodedata.combining(c)).casefold().translate(_FOLDED)
    text = text.replace("&", " and ")
    return _OTHER.sub(" ", text).split()


def _without_noise(words: list[str]) -> list[str]:
    kept: list[str] = []
    i = 0
    while i < len(words):
        phrase = next((p for p in _NOISE_PHRASES if tuple(words[i : i + len(p)]) == p), None)
        if phrase is not None:
            i += len(phrase)
            continue
        if words[i] not in _NOISE_WORDS:
            kept.append(words[i])
        i += 1
    return kept


@lru_cache(maxsize=65_536)
def name_key(name: str) -> str:
    """The key of `name`: its normalised words without legal forms and articles, in alphabetical
    order (word order does not tell names apart: "Smith, John" is "John Smith"), space-separated."""
    words = name_words(name)
    return " ".join(sorted(_without_noise(words) or words))


def has_legal_form(name: str) -> bool:
    """Whether `name` holds a word of a legal form or article (a guess that it names an
    organisation, used when a contact is made from a case's client name)."""
    words = name_words(name)
    return len(_without_noise(words)) < len(words) and not (words and words == ["the"])
