"""Organisations found by their form: a capitalised name ending in a legal form or a body suffix
("Frost & Abernathy LLP", "Federal Communications Commission"), or "Department/Office of ...".
The model's organisations (model_names.py) fill in where no rule matched."""

from __future__ import annotations

import re

from ..resources import alternatives, word_set
from ..types import Page
from .base import EntitySet, Spans, SpansByPage, overlaps
from .name_rules import (
    BODY_SUFFIX,
    BODY_WORDS,
    COMPANY_WORD,
    LEADING_NOISE,
    ORG_SUFFIX,
    ModelNames,
    Vocabulary,
    is_person_name,
    join_wrapped_lines,
    org_key,
)
from .ner import english_words

# Words no organisation's name has: courts and judges (not listed, docs/decisions/0007), headings.
_NOT_ORG = word_set("not_organization_words")

# No comma inside a name except before its suffix: "Karen Liu, Frost & Abernathy LLP" is two names.
# The longest name ending in a suffix wins ("Bank of America, N.A.", "Nationwide Fund Management LLC").
_COMPANY_LINK = r"(?:[ ]|[ ](?:of|of the|for|do|de|di|OF)[ ])"
# "Berkshire Life Insurance Company of America", "Western Reserve Life Assurance Co. of Ohio".
_COMPANY_OF = (
    r"(?:(?:(?<=Company)|(?<=Co\.))[ ]of[ ][A-Z][a-z]+(?:[ ][A-Z][a-z]+)?"
    r"|(?<=Corporation)[ ]of[ ][A-Z][a-z]+)?"
)
_ORG = re.compile(
    rf"(?P<name>(?:{COMPANY_WORD}{_COMPANY_LINK}){{0,7}}{COMPANY_WORD},?[ ]{ORG_SUFFIX}{_COMPANY_OF})"
)
# A body's name may join words with "and" ("Securities and Exchange Commission", "Bureau of
# Customs and Border Protection") where a company's may not ("between Acme and Beta LLC" is two).
_LINK = r"(?:and|of|of the|for|on|&|AND|OF|OF THE|FOR)"
# The words after "of": a wrapped line joined may leave two spaces ("Workers'  Compensation"). The
# apostrophe is looked for after the word's "s" (a lookbehind: `[\w.-]*` has taken the "s" already).
_OBJECT = (
    r"(?:[ ]{1,2}(?:(?:and|of|of the|AND|OF|OF THE)[ ])?[A-Z][\w.-]*"
    r"(?:(?<=[sS])['\u2019](?=[ ]{1,2}[A-Z]))?){1,5}"
)
_OF_THE = r"[ ](?:of|for|OF|FOR)(?:[ ](?:the|THE))?"
_BODY = re.compile(rf"(?:{COMPANY_WORD}[ ](?:{_LINK}[ ])?){{1,6}}{BODY_SUFFIX}(?:{_OF_THE}{_OBJECT})?")
# Bodies named by their kind first: "Judicial Conference of the United States", "Oklahoma
# Department of Corrections", "Tennessee Division of Workers' Compensation", "University of Iowa".
_KIND_FIRST = rf"(?:{alternatives('body_words')}|Division|DIVISION|Ministry|University|College)"
_ORG_PREFIXED = re.compile(rf"(?:(?:{COMPANY_WORD})[ ]){{0,4}}{_KIND_FIRST}{_OF_THE}{_OBJECT}")
# A list of partners' surnames before the firm's form: "Wilson, Elser, Moskowitz, Edelman & Dicker
# LLP", "Grace, Tisdale, Clifton, P.A." (not after a given name: "Karen Liu, Frost & Abernathy LLP").
_SURNAME = r"[A-Z][A-Za-z'\u2019-]+"
_FIRM_LIST = re.compile(
    rf"(?<![A-Za-z][ ])(?<![A-Za-z]){_SURNAME}(?:,[ ]{_SURNAME}){{1,5}}(?:,?[ ]&[ ]{_SURNAME})?"
    rf",?[ ]{ORG_SUFFIX}"
)
# An address, not a name: a ZIP code follows ("Denver, CO 80202").
_ZIP_AFTER = re.compile(r"[ ,]*\d{5}\b")
# Words of a sentence in capitals, which no name has ("WOULD LIKELY CAUSE COMPETITIVE HARM TO THE
# COMPANY"): a name found in capitals starts after the last of them.
_CAPITAL_SENTENCE_WORDS = frozenset(
    {
        "TO",
        "BY",
        "BECAUSE",
        "HAS",
        "HAVE",
        "BEEN",
        "IS",
        "ARE",
        "WAS",
        "WERE",
        "WOULD",
        "WILL",
        "SHALL",
        "MAY",
        "CAUSE",
        "WITH",
        "FROM",
        "THAT",
        "WHICH",
        "IF",
        "AS",
        "IN",
        "ON",
        "AT",
        "HARM",
        "NOT",
        "OR",
    }
)
# Two names joined by "and", not one: "ArTara and University", "COBA Annuity Fund and COBA General Fund".
_PAIR = re.compile(
    rf"^(?P<first>.+?{BODY_SUFFIX})[ ]and[ ](?P<second>.+)$|^(?P<one>\S+)[ ]and[ ](?P<two>\S+)$"
)
_ROLES = (
    "Officer|Director|President|Counsel|Manager|Partner|Member|Trustee|Engineer|Executive|Secretary"
    "|Chairman|Chair|Commissioner|Administrator|Branch|Head"
)
# A role before the body, as written or in a caption's capitals ("DIRECTOR OF THE NORTH CAROLINA
# STATE BUREAU OF INVESTIGATION": the body is the bureau).
_ROLE_OF = re.compile(
    rf"^.*\b(?:{_ROLES}|{_ROLES.upper()})\b,?[ ](?:(?:of|at|for|OF|AT|FOR)[ ](?:(?:the|THE)[ ])?)?"
)
# A docket or case number glued before a name ("24-10418-CTG JOANN Inc.").
_CASE_NUMBER = re.compile(r"^\d+(?:-\d+)+(?:-[A-Z]+)*[ ]")
# A person's name before "for", "of" or "and" is no part of the body after it ("Fred P. Baggett for
# North Carolina Association of Chiefs of Police", "Christine M. Kroupa of Gordon Rees LLP").
_GIVEN_OR_INITIAL = r"(?:[A-Z][a-z]*['\u2019]?[A-Z]?[a-z'\u2019-]+|[A-Z]\.)"  # "O'Neill", "McGuire"
_PERSON_BEFORE = re.compile(
    rf"^(?P<person>{_GIVEN_OR_INITIAL}(?:[ ]{_GIVEN_OR_INITIAL}){{1,3}})[ ](?:for|of|and)[ ]"
)
_TITLED_PERSON_OF = re.compile(r"^(?:Mr|Mrs|Ms|Dr|Prof)\.?[ ](?:[A-Z][a-z]+[ ]){1,3}of[ ](?=[A-Z])")

# Glue points also after one or two digits glued to a word ("Exhibit 4Rare Element", "1The Company"),
# not after a longer number, which may be the name's ("313Acquisition, LLC").
_GLUE_POINT = re.compile(
    r"(?<=[a-z])(?=[A-Z]{2,}\b)|(?:(?<=[a-z])|\b)(?:and|between|or|the)(?=[A-Z])|(?<![\d])\d{1,2}(?=[A-Z][a-z])"
)
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
    for prefix in (_CASE_NUMBER, _TITLED_PERSON_OF, _ROLE_OF, LEADING_NOISE):
        noise = prefix.match(raw)
        if noise:
            raw, start = raw[noise.end() :], start + noise.end()
    link = re.match(r"(?:and|the|and the)[ ]", raw)
    if link:  # "Defendants and the Corrections Officers ...": what follows the stripped role
        raw, start = raw[link.end() :], start + link.end()
    capitals = [
        m.end() for m in re.finditer(r"\S+[ ]?", raw) if m.group(0).strip() in _CAPITAL_SENTENCE_WORDS
    ]
    if capitals:
        raw, start = raw[capitals[-1] :], start + capitals[-1]
    person = _PERSON_BEFORE.match(raw)
    if person and _looks_like_person(person.group("person")):
        raw, start = raw[person.end() :], start + person.end()
    raw = raw.rstrip(",")
    words = [w for w in re.split(r"[\s,]+", raw) if w]
    if len(words) < 2 or not (words[0][:1].isupper() or words[0][:1].isdigit()) or "Court" in words:
        return None  # courts are not listed (docs/decisions/0007)
    return raw, start


def _looks_like_person(name: str) -> bool:
    """A person's name by probablepeople, with a word that is not ordinary English ("Corporate
    Agents", "Law Offices" are not people, whatever the parser says)."""
    known = english_words()
    words = [w.strip(".").casefold() for w in name.split() if len(w.strip(".")) > 2]
    return any(w not in known and w.removesuffix("s") not in known for w in words) and is_person_name(name)


_DESCRIBED = re.compile(r"(?:^|\s)an?\s+$")


def _generic_company(name: str, vocabulary: Vocabulary) -> bool:
    """ "Investment Company", "WHEREAS, Company", "Governmental Authority", "Executive Board": one
    ordinary word before a legal form or a body's kind is a description or a defined term."""
    words = [w for w in re.split(r"[\s,]+", name) if w]
    if len(words) != 2:
        return False
    first = re.sub(r"['\u2019]s$", "", words[0]).casefold()  # "Clerk's Office"
    known = english_words()
    # A plural is an ordinary word too: "Appeals Board" (the lemma index lists "appeal").
    ordinary = first in known or (first.endswith("s") and first[:-1] in known)
    return first in vocabulary.lower or (words[1] in BODY_WORDS and ordinary)


def _cut_repeat(name: str) -> str:
    """A body's name up to where the words after "of" start again: a heading under a caption joined
    to it reads "Tennessee Bureau of Workers' Compensation Workers' Compensation Appeals Board"."""
    of = re.search(r"[ ](?:of|OF)[ ](?:(?:the|THE)[ ])?", name)
    if of is None:
        return name
    words = name[of.end() :].split(" ")
    again = next((i for i in range(1, len(words)) if words[i] and words[i] == words[0]), None)
    return name if again is None else name[: of.end()] + " ".join(words[:again]).rstrip()


# An address block: a person's name on a line, their firm on the next, then the street ("Paul J.
# Fishman\nArnold & Porter Kaye Scholer\nOne Gateway Center"): the line between is the firm, with
# or without a legal form ("Shook Hardy & Bacon", "McGuireWoods").
_ADDRESSEE_FIRM = re.compile(
    r"(?m)^[ \t]*[A-Z][a-z]+(?:[ ][A-Z]\.)?(?:[ ][A-Z][a-z'\u2019-]+){1,2}(?:,?[ ]Jr\.)?[ \t]*\n"
    r"[ \t]*(?P<firm>[A-Z][\w'\u2019.-]*(?:[ ](?:&|and|[A-Z][\w'\u2019.,-]*)){0,6})[ \t]*\n"
    r"[ \t]*(?:\d+[ ]|(?:One|Two|Three|Four|Five)[ ][A-Z]|P\.?[ ]?O\.?[ ]Box)"
)


def _addressee_firms(text: str, vocabulary: Vocabulary) -> list[tuple[str, int]]:
    firms = []
    for match in _ADDRESSEE_FIRM.finditer(text):
        firm = match.group("firm").rstrip(",")
        if any(w in _NOT_ORG for w in firm.split()) or not vocabulary.has_proper_word(firm):
            continue
        # One word under a person's name is their firm ("Gibbons"), never a second person.
        if "&" not in firm and " " in firm and is_person_name(firm):
            continue
        firms.append((firm, match.start("firm")))
    return firms


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
        # The rules by form, longest first where they overlap; then the model's organisations
        # where no rule found one. A name the wrapping of prose cut ("Marathon Petroleum\nCompany
        # LP") is read whole: the lines of wrapped prose are joined (same offsets).
        text = join_wrapped_lines(page.text)
        candidates: list[tuple[str, int]] = []
        for pattern in (_FIRM_LIST, _ORG, _BODY, _ORG_PREFIXED):
            for match in pattern.finditer(text):
                cleaned = _clean_org(match.group(0), match.start())
                if cleaned is None or overlaps(spans, match.start(), match.end()):
                    continue
                name, start = cleaned
                name = _cut_repeat(name)
                if _generic_company(name, vocabulary) or _DESCRIBED.search(text, 0, start):
                    continue
                if _ZIP_AFTER.match(text, start + len(name)) or any(w in _NOT_ORG for w in name.split()):
                    continue
                if pattern is _BODY and re.match(r"[ ][A-Z][a-z]", text[start + len(name) :]):
                    continue  # a body's word inside a longer title: "Securities Exchange Act"
                pair = _PAIR.match(name)
                if pair and pattern is _BODY:
                    first = pair.group("first") or pair.group("one")
                    if pair.group("first"):
                        candidates.append((first, start))
                        second = pair.group("second")
                        candidates.append((second, start + len(name) - len(second)))
                    continue
                candidates.append((name, start))
        for name, start in _addressee_firms(text, vocabulary):
            if not overlaps(spans, start, start + len(name)):
                candidates.append((name, start))
        for name, start in sorted(candidates, key=lambda c: (-len(c[0]), c[1])):
            if not overlaps(taken, start, start + len(name)):
                add(name, page.number, start, start + len(name))
                taken.append((start, start + len(name)))
        for name, number, start, end in model.organizations:
            if number == page.number and not overlaps(taken, start, end):
                add(name, number, start, end)
                taken.append((start, end))
    for key, entity in found.items.items():
        entity.text = display[key]
    return found
