"""Organisations found by their form: a capitalised name ending in a legal form or a body suffix
("Frost & Abernathy LLP", "Federal Communications Commission"), or "Department/Office of ...".
The model's organisations (model_names.py) fill in where no rule matched."""

from __future__ import annotations

import re

from ..resources import word_set
from ..types import Page
from .base import EntitySet, Spans, SpansByPage, overlaps
from .name_rules import (
    COMPANY_WORD,
    LEADING_NOISE,
    ORG_SUFFIX,
    ModelNames,
    Vocabulary,
    org_key,
)

_ORG = re.compile(
    # No comma inside a name except before its suffix: "Karen Liu, Frost & Abernathy LLP" is two names.
    rf"(?P<name>(?:{COMPANY_WORD}(?:[ ]|[ ](?:of|of the|for)[ ])){{0,7}}?{COMPANY_WORD},?[ ]{ORG_SUFFIX})"
)
_ORG_PREFIXED = re.compile(
    r"\b(?:Department|Office|Ministry|Bureau) of(?: the)?(?: [A-Z][a-z]+(?:s['\u2019])?){1,4}(?<!['\u2019])"
)
# Courts named by their department or district ("Appellate Division, Second Department").
_ROLE_OF = re.compile(
    r"^.*\b(?:Officer|Director|President|Counsel|Manager|Partner|Member|Trustee|Engineer|Executive)\b"
    r",?[ ](?:(?:of|at|for)[ ])?"
)
_TITLED_PERSON_OF = re.compile(r"^(?:Mr|Mrs|Ms|Dr|Prof)\.?[ ](?:[A-Z][a-z]+[ ]){1,3}of[ ](?=[A-Z])")

_GLUE_POINT = re.compile(r"(?<=[a-z])(?=[A-Z]{2,}\b)|(?:(?<=[a-z])|\b)(?:and|between|or|the)(?=[A-Z])")
# A sentence ends inside a run of capitalised words ("Fee. The Company will pay"): a word of three
# letters or more and a full stop, unless it is an abbreviation ("Corp.", "Bros.").
_SENTENCE_END = re.compile(r"\b[A-Za-z]{3,}\.[ ]+(?=[A-Z])")
_ABBREVIATIONS = word_set("abbreviations")


def _after_glue(raw: str) -> int:
    """Offset in `raw` after the last glue point (0 when there is none)."""
    cut = 0
    for point in _GLUE_POINT.finditer(raw):
        cut = point.end()
    for stop in _SENTENCE_END.finditer(raw):
        if stop.group(0).strip().rstrip(".").casefold() not in _ABBREVIATIONS and stop.end() < len(raw):
            cut = max(cut, stop.end())
    return cut


def _clean_org(raw: str, start: int) -> tuple[str, int] | None:
    glue = _after_glue(raw)
    raw, start = raw[glue:], start + glue
    for prefix in (_TITLED_PERSON_OF, _ROLE_OF, LEADING_NOISE):
        noise = prefix.match(raw)
        if noise:
            raw, start = raw[noise.end() :], start + noise.end()
    raw = raw.rstrip(",")
    words = [w for w in re.split(r"[\s,]+", raw) if w]
    if len(words) < 2 or not (words[0][:1].isupper() or words[0][:1].isdigit()) or "Court" in words:
        return None  # courts are not listed (docs/decisions/0007)
    return raw, start


_DESCRIBED = re.compile(r"(?:^|\s)an?\s+$")


def _generic_company(name: str, vocabulary: Vocabulary) -> bool:
    """ "Investment Company", "WHEREAS, Company": one ordinary word before a legal form is a
    description or a defined term, not a name."""
    words = [w for w in re.split(r"[\s,]+", name) if w]
    return len(words) == 2 and words[0].casefold() in vocabulary.lower


def find_organizations(
    pages: list[Page], excluded: SpansByPage, model: ModelNames, vocabulary: Vocabulary
) -> EntitySet:
    found = EntitySet()
    display: dict[str, str] = {}

    def add(name: str, page: int, start: int, end: int) -> None:
        key = org_key(name)
        found.add(key, name, page, start, end, None)
        # Prefer the form in mixed case over a caption in capitals.
        if key not in display or (display[key].isupper() and not name.isupper()):
            display[key] = name

    for page in pages:
        spans = excluded.get(page.number, [])
        taken: Spans = []
        for match in _ORG.finditer(page.text):
            cleaned = _clean_org(match.group(0), match.start())
            if cleaned is None or overlaps(spans, match.start(), match.end()):
                continue
            name, start = cleaned
            if _generic_company(name, vocabulary) or _DESCRIBED.search(page.text, 0, start):
                continue
            add(name, page.number, start, start + len(name))
            taken.append((start, start + len(name)))
        # The model's organisations where the legal-form rule found none; they come before the
        # "Department of ..." rule, whose match is often a part ("U.S. Department of Labor").
        for name, number, start, end in model.organizations:
            if number == page.number and not overlaps(taken, start, end):
                add(name, number, start, end)
                taken.append((start, end))
        for match in _ORG_PREFIXED.finditer(page.text):
            cleaned = _clean_org(match.group(0), match.start())
            if (
                cleaned is None
                or overlaps(spans, match.start(), match.end())
                or overlaps(taken, *match.span())
            ):
                continue
            name, start = cleaned
            add(name, page.number, start, start + len(name))
    for key, entity in found.items.items():
        entity.text = display[key]
    return found
