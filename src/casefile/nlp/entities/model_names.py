"""People and organisations by the trained model (ner.py), cleaned and checked by rules: no courts,
departments or judges; no quoted defined terms; no phrases of ordinary English words written in
lower case in the document; no addresses; glued words cut; cited cases' parties left out."""

from __future__ import annotations

import re

from ..resources import word_set
from ..types import Page
from .base import SpansByPage, overlaps
from .name_rules import (
    COURT_PART,
    FUNCTION_WORDS,
    LEADING_NOISE,
    ORG_AFTER,
    ORG_HEAD_WORDS,
    ORG_WORDS,
    ModelNames,
    Vocabulary,
    is_person_name,
    join_wrapped_lines,
    title_case,
    valid_person,
)
from .ner import english_words, model_spans

# A name never spans a blank line: what follows it is another block ("the First Circuit\n\nNo").
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
# Generational suffixes the model leaves out of a person's span.
_PERSON_SUFFIX = re.compile(r",?[ ]?\n?[ \t]*(?:Jr\.|Sr\.|III|II|IV)(?![\w])")
# The rest of a name broken across lines: "with whom Aaron\nM. Frey, Attorney General".
_NAME_CONTINUED = re.compile(r"[ \t]*\n[ \t]*(?:[A-Z]\.[ ])?[A-Z][a-z'\u2019-]+(?=,|[ ]and\b)")
_NOT_ORG_WORDS = word_set("not_organization_words")
# Last words of laws, documents and events, not of bodies ("Illinois Minimum Wage Law").
_NOT_ORG_LAST_WORDS = frozenset({"Law", "Act", "Code", "Rule", "Rules", "Litigation", "Date", "Team", "File"})


def _model_span(text: str, start: int, end: int) -> tuple[str, int, int] | None:
    raw = text[start:end]
    blank = _BLANK_LINE.search(raw)
    if blank:
        raw = raw[: blank.start()]
    raw = re.sub(r"['\u2019]s$", "", raw.rstrip(" \t\n,;:")).rstrip(" \t\n,;:")
    stripped = raw.lstrip(" \t\n")
    start += len(raw) - len(stripped)
    if not stripped:
        return None
    return " ".join(stripped.split()), start, start + len(stripped)


_GLUED_LEAD = re.compile(r"^(?:and|or|the|between|of|by)(?=[A-Z])")
_GLUED_TAIL = re.compile(r"(?<=[a-z.])(?:Name|Title|By|Date|Its)(?=\W|$)")
_ADDRESS_WORDS = frozenset(
    {
        "Drive",
        "Street",
        "St",
        "Road",
        "Avenue",
        "Ave",
        "Boulevard",
        "Lane",
        "Suite",
        "Floor",
        "NW",
        "NE",
        "SW",
        "SE",
        "Avenida",
        "Rua",
        "Calle",
        "Bairro",
        "Cidade",
        "Square",
        "Plaza",
        "Bldg",
    }
)
# What follows a place, not a person: a postcode or street number ("Marble Falls, TX 78654",
# "Magalhaes de Castro, 4800").
_PLACE_AFTER = re.compile(r",?[ ]*(?:[A-Z]{2}[ ]+)?\d{4,5}\b|,[ ]*\d+\b")
# Lower-case words a name may contain ("Bend the Arc", "Union for Reform Judaism").
_NAME_LINK_WORDS = frozenset(
    {"of", "the", "for", "and", "de", "du", "la", "del", "von", "van", "on", "in", "&"}
)
# Words glued by a PDF's extraction ("Solarand Vivint", "AgreementbetweenCuro").
_GLUED_WORD = re.compile(r"[a-z](?:and|the|between|or)[A-Z]")
_COURT_DISTRICT = re.compile(r"\b(?:Northern|Southern|Eastern|Western|Middle|Central) District\b")


def _model_organization(name: str, vocabulary: Vocabulary) -> bool:
    words = name.split()
    if len(words) < 2 or not words[0][:1].isupper() or name.casefold() in vocabulary.defined:
        return False
    if words[-1].casefold() in vocabulary.defined:
        return False  # ends on a defined role ("the 'Individual'"): "Release Individual"
    if any(w.strip(".,") in _NOT_ORG_WORDS for w in words) or any(c.isdigit() for c in name):
        return False
    if _GLUED_WORD.search(name) or _COURT_DISTRICT.search(name) or COURT_PART.search(name):
        return False
    if "v." in words or "v" in words:
        return False
    if (
        any(w[:1].islower() and w not in _NAME_LINK_WORDS for w in words)
        or words[-1].rstrip(".") in _ADDRESS_WORDS
    ):
        return False  # "Fee the Company" is a heading and a sentence; "K Street NW" an address
    if words[-1] in _NOT_ORG_LAST_WORDS:
        return False
    if re.fullmatch(r"(?:the )?(?:State|Commonwealth|People|County|City) of .*", name, re.IGNORECASE):
        return False
    if sum(len(w.strip(".,")) <= 2 and w.isupper() for w in words) * 2 >= len(words):
        return False  # a list of codes ("AL • AR • CA • CO"), not a name
    known = english_words()
    if len(words) == 2 and words[0].casefold() in known and words[1] in ORG_HEAD_WORDS:
        return False  # "Executive Board", "Maintenance Services": a term, not a name
    if any(w in ORG_HEAD_WORDS or w in ORG_WORDS for w in words):
        return True
    if is_person_name(name):
        return False  # "Tyrone Heath" in an e-mail's header is a person the model took for a firm
    # A name has a word that is not ordinary English, or not written in lower case in this document.
    content = [w.strip(".,'\u2019").casefold() for w in words if w.casefold() not in FUNCTION_WORDS]
    return vocabulary.has_proper_word(name) and not all(w in known for w in content)


def _model_person(name: str, vocabulary: Vocabulary) -> bool:
    words = name.split()
    if len(words) < 2 or not valid_person(name) or any(c.isdigit() for c in name):
        return False
    if words[-1].rstrip(".") in _ADDRESS_WORDS or _GLUED_WORD.search(name) or "v." in words or "v" in words:
        return False
    if name.casefold() in vocabulary.defined:
        return False
    return vocabulary.has_proper_word(name)


def _unglue(text: str, start: int, end: int) -> tuple[int, int]:
    """Words glued by a PDF's extraction: "andMitchell Vitalis", "John G. FinleyName:"."""
    raw = text[start:end]
    lead = _GLUED_LEAD.match(raw)
    if lead:
        start += lead.end()
        raw = raw[lead.end() :]
    tail = _GLUED_TAIL.search(raw)
    if tail:
        end = start + tail.start()
    return start, end


# What the model leaves off a body's name: "Church" + " of the Open Bible", " of God".
_OF_TAIL = re.compile(r"[ ](?:of|for)(?:[ ]the)?(?:[ ][A-Z][\w'\u2019-]*)+")


def model_names(pages: list[Page], excluded: SpansByPage) -> ModelNames:
    """The model's people and organisations, cleaned and checked by the rules."""
    found = ModelNames()
    vocabulary = Vocabulary.of(pages)
    for original in pages:
        page = Page(number=original.number, text=join_wrapped_lines(original.text))
        spans = excluded.get(page.number, [])
        for model_label, raw_start, raw_end in model_spans(page.text):
            label = model_label
            span = _model_span(page.text, *_unglue(page.text, raw_start, raw_end))
            if span is None or overlaps(spans, span[1], span[2]):
                continue  # parties of cited cases belong to their citation
            name, start, end = span
            noise = LEADING_NOISE.match(name)
            if noise:  # "Appellant Vanessa St. Pierre", "The Rock Church" keeps its "The" (org_key drops it)
                if not name[noise.end() :]:
                    continue
                if label == "PERSON" or not noise.group(0).startswith("The"):
                    cut = len(page.text[start:end]) - len(page.text[start:end][noise.end() :])
                    name, start = " ".join(name[noise.end() :].split()), start + cut
            words = name.split()
            if not words:
                continue
            if label == "PERSON" and words[-1] in ORG_HEAD_WORDS:
                label = "ORG"  # "Thomas More Society", "Machias Valley Baptist"
            if label == "ORG":
                tail = _OF_TAIL.match(page.text, end) if words[-1] in ORG_HEAD_WORDS else None
                if tail:  # "Athens Church" + " of the Open Bible"
                    name, end = f"{name} {' '.join(tail.group(0).split())}", tail.end()
                if _model_organization(name, vocabulary):
                    found.organizations.append((name, page.number, start, end))
                continue
            if "\n" in page.text[start:end] or "@" in name:
                continue  # a caption's or a block's lines are separate names
            if ORG_AFTER.match(page.text, end):
                continue  # "C. R. Bard, Inc." is a company, found by its legal form
            continued = _NAME_CONTINUED.match(page.text, end) if len(words) == 1 else None
            if continued:
                name, end = f"{name} {' '.join(continued.group(0).split())}", continued.end()
            suffix = _PERSON_SUFFIX.match(page.text, end)
            if suffix:
                name, end = f"{name}{' '.join(suffix.group(0).split(chr(10)))}", suffix.end()
                name = " ".join(name.split())
            if name.isupper():
                name = title_case(name)
            # A lone word is a surname or a first name the model is least sure of; the rules find
            # the surnames that matter (judges, justices, caption parties).
            if not _model_person(name, vocabulary) or _PLACE_AFTER.match(page.text, end):
                continue
            found.people.append((name, page.number, start, end))
    return found
