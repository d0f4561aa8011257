"""People and organisations: organisations by their legal form or body suffix, people by the
places names stand in legal writing (titles, roles, signatures, captions, header fields)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..resources import alternatives, word_set
from ..types import Page
from .base import EntitySet, Spans, SpansByPage, overlaps
from .ner import english_words, model_spans

_LEGAL_FORM = rf"(?:{alternatives('legal_forms')})\b\.?"
_BODY_SUFFIX = r"(?:Bank|BANK|Fund|FUND|Commission|Agency|Bureau|Authority)\b"
_ORG_SUFFIX = rf"(?:{_LEGAL_FORM}|{_BODY_SUFFIX})(?:,?[ ]{_LEGAL_FORM})?"
# Names never cross a line: a caption's lines are separate names.
_NAME_WORD = r"(?:[A-Z][A-Za-z'\u2019-]*\.?|[a-z][A-Z][A-Za-z]+|&)"
# Words a company's name may have that a person's may not: dotted initials ("V.O.S."), a web
# domain ("BorrowMoney.com"), a leading number with letters or a hyphen ("313Acquisition",
# "70-35 113th St.") or of five digits or more (the numbered "695014 B.C. Ltd.").
_COMPANY_WORD = (
    r"(?:(?:[A-Z]\.){2,}|[A-Za-z][\w-]*\.(?:com|COM)|\d+[A-Za-z][\w-]*|\d+-\d+[\w-]*|\d{5,}|"
    + _NAME_WORD
    + ")"
)
_ORG = re.compile(
    # No comma inside a name except before its suffix: "Karen Liu, Frost & Abernathy LLP" is two names.
    rf"(?P<name>(?:{_COMPANY_WORD}(?:[ ]|[ ](?:of|of the|for)[ ])){{0,7}}?{_COMPANY_WORD},?[ ]{_ORG_SUFFIX})"
)
_ORG_PREFIXED = re.compile(
    r"\b(?:Department|Office|Ministry|Bureau) of(?: the)?(?: [A-Z][a-z]+(?:s['\u2019])?){1,4}(?<!['\u2019])"
)
# Courts named by their department or district ("Appellate Division, Second Department").
_COURT_PART = re.compile(
    r"\b(?:First|Second|Third|Fourth|Fifth|Sixth|Seventh|Eighth|Ninth|Tenth|Eleventh)"
    r"(?:[ ]Judicial)?[ ](?:Department|District|Circuit)\b"
)
_LEADING_NOISE = re.compile(rf"^(?:(?:{alternatives('leading_noise_words')}|(?i:In[ ]re))\b[:,]?\s+)+")
# "Chief Technology Officer of Northpoint Software, Inc.": the role is not part of the name.
_ROLE_OF = re.compile(
    r"^.*\b(?:Officer|Director|President|Counsel|Manager|Partner|Member|Trustee|Engineer|Executive)\b"
    r",?[ ](?:(?:of|at|for)[ ])?"
)
_TITLED_PERSON_OF = re.compile(r"^(?:Mr|Mrs|Ms|Dr|Prof)\.?[ ](?:[A-Z][a-z]+[ ]){1,3}of[ ](?=[A-Z])")
_ORG_WORDS = word_set("organization_words")
_LEGAL_FORM_WORDS = word_set("legal_forms") - {"Co", "CO", "AG", "PC"}  # also initials or names

_TITLE = (
    r"(?:Mr|Mrs|Ms|Miss|Dr|Prof|Professor|Judge|Justice|Hon|Honorable|Honourable|Magistrate Judge"
    r"|Chief Judge)\.?"
)
_GIVEN = r"(?:[A-Z](?:['\u2019][A-Z])?[a-z]+(?:-[A-Za-z][a-z]+)?|[A-Z]\.)"
_NAME_TAIL = r"(?:[ ](?:(?:de|van|von|da|del|der|la|le)[ ])?" + _GIVEN + r"){0,3}"
_PERSON_NAME = rf"(?P<person>{_GIVEN}{_NAME_TAIL})"
_SECOND_NAME = rf"(?P<second>{_GIVEN}{_NAME_TAIL})"
_CAPS_NAME = r"(?P<caps>[A-Z][A-Z'\u2019-]+(?:[ ][A-Z]\.)?(?:[ ][A-Z][A-Z'\u2019-]+){1,2})"
_HEADER_FIELDS = (
    r"(?i:From|To|Cc|Bcc|Prepared by|Attention|Attn|Notary Public|Project manager|Attendees|Tenants?|Landlord"
    r"|Buyer|Seller|Witness|Deponent)"
)
_PERSON_RULES = [
    re.compile(pattern)
    for pattern in (
        rf"\b{_TITLE}[ ]+{_PERSON_NAME}",
        rf"\b(?:the[ ])?(?:Honorable|Hon\.)[ ]+{_PERSON_NAME}",
        (
            r"\b(?:Plaintiffs?|Defendants?|Petitioner|Respondent|Employee|Decedent|Affiant|Declarant)[ ]+"
            rf"{_PERSON_NAME}(?=[\s,.;)])"
        ),
        rf"(?:^|\n)[ \t]*(?:By:?[ ]*)?/s/[ ]*{_PERSON_NAME}(?=[ ]*(?:,|\n|$))",
        rf"(?:^|\n)[ \t]*By:[ ]*(?:/s/[ ]*)?{_PERSON_NAME}(?=[ ]*(?:,|\n|$))",
        rf"\bI,[ ]{_PERSON_NAME},[ ](?:being|declare|hereby|state|certify|the undersigned)",
        rf"\bappeared[ ]{_PERSON_NAME},",
        (
            rf"(?:^|\n)[ \t]*{_HEADER_FIELDS}[ ]*:[ ]*(?:(?:Mr|Ms|Mrs|Dr)\.[ ])?{_PERSON_NAME}"
            rf"(?:[ ]and[ ]{_SECOND_NAME})?(?=[ ]*(?:<|,|\n|\(|$|;))"
        ),
        (
            rf"\b{_PERSON_NAME},[ ](?:(?:the|our|its|an?)[ ])?(?:[A-Z][a-z]+[ ]){{0,3}}"
            r"(?i:Member|Director|Officer|Counsel|Partner|President|Manager|Trustee|Secretary|Treasurer|"
            r"Associate|Engineer|Chief Executive|Head of [A-Z][a-z]+|"
            rf"field service manager)\b"
        ),
        (
            rf"\b(?i:officer|counsel|director|president|founder|partner|manager|engineer|associate|son|daughter|wife|"
            rf"husband|expert|witness|agent|attorney|trustee),[ ]{_PERSON_NAME}(?=,|[ ]\(|;)"
        ),
        rf"\b{_PERSON_NAME}[ ]\((?:trustee|her son|his son|her daughter|his daughter|associate)",
        (
            rf"\b{_PERSON_NAME}[ ]\((?:the[ ])?[\"\u201c]"
            r"(?:Employee|Decedent|Executive|Consultant|Guarantor|Buyer|Seller|Borrower|Lender)"
        ),
        rf"\b{_PERSON_NAME}(?=,[ ](?:born|aged|deceased|a minor)\b)",
        rf"\((?P<person>{_GIVEN}(?:[ ]{_GIVEN}){{1,3}})\)",
        (
            rf"(?:^|\n)[ \t]*{_PERSON_NAME}[ \t]*\n[ \t]*"
            r"(?:Partner|Chief Executive|Managing Director|Counsel|Director|"
            rf"United States|District Judge|Judge|Magistrate|Notary)"
        ),
        (
            rf"(?:^|\n)[ \t]*{_CAPS_NAME}[ \t]*\n[ \t]*"
            r"(?:United States|Chief|Circuit|District|Magistrate|Judge|Justice)"
        ),
        (rf"(?:^|\n)[ \t]*{_CAPS_NAME},[ ](?:individually|Plaintiffs?|Defendants?|Petitioner|Respondent)"),
        rf"\b(?:of|and)[ ]{_CAPS_NAME}(?:[ ]and|,)[ ][A-Z]",
        rf"(?:^|\n)[ \t]*{_CAPS_NAME}[ ]and[ ][A-Z]",
        rf"\b\d{{2}}/\d{{2}}/\d{{4}}[ ]+{_PERSON_NAME}(?=[ ][ ])",
        rf"(?:LLP|LLC|P\.C\.|PLLC)[ \t]*\n[ \t]*{_PERSON_NAME}[ \t]*(?=\n|$)",
        # Counsel blocks: a name on its own line (often in capitals) over an e-mail address.
        rf"(?:^|\n)[ \t]*{_CAPS_NAME}\*?[ \t]*\n[ \t]*[\w.+-]+@[\w-]+\.",
        rf"(?:^|\n)[ \t]*{_PERSON_NAME}\*?(?:[ \t]*\n[ \t]*|[ \t]+)[\w.+-]+@[\w-]+\.",
        rf"\b(?:DC|District|Magistrate|Circuit|Presiding)[ ]Judge:[ ]*{_PERSON_NAME}(?=[ \t]*(?:\n|$))",
    )
]
# Panels: "Before Barksdale, Stewart, and Dennis, Circuit Judges." and "Before\n\nHoward, Chief
# Judge,\nSelya and Barron, Circuit Judges."
_PANEL = re.compile(r"\bBefore:?\s+(?P<list>[^.;:]{1,300}?)\bJudges\b")
# Justices and judges named by their title after the name: "Kagan, J.", "Roberts, C. J.",
# "Sotomayor, Kavanaugh, and Jackson, JJ.", "Linda Christopher, J.P.".
_JUSTICES = re.compile(
    r"(?P<list>(?:[A-Z][A-Za-z'\u2019-]+(?:[ ][A-Z][A-Za-z.'\u2019-]*){0,2}(?:,[ ](?:and[ ])?|[ ]and[ ]))*"
    r"[A-Z][A-Za-z'\u2019-]+(?:[ ][A-Z][A-Za-z.'\u2019-]*){0,2}),[ ]?"
    r"(?:C\.[ ]?J\.|JJ\.|J\.(?:[ ]?P\.)?|P\.[ ]?J\.)(?!\w)"
)
_PANEL_NOISE = word_set("panel_noise_words")


def _panel_names(text: str) -> Iterator[tuple[str, int, int]]:
    """(name, start, end) of each judge of a panel or a list of justices."""
    for pattern in (_PANEL, _JUSTICES):
        for match in pattern.finditer(text):
            for item in re.finditer(r"[^,\n]+", match.group("list")):
                raw = re.sub(r"^\s*(?:and\s+)?", "", item.group(0)).rstrip()
                start = match.start("list") + item.start()
                for part in re.split(r"\s+and\s+", raw):
                    words = [w for w in part.split() if w not in _PANEL_NOISE]
                    if not words or len(words) > 3 or not all(w[:1].isupper() for w in words):
                        continue
                    name = " ".join(words)
                    if name.isupper():
                        name = _title_case(name)
                    offset = text.find(words[0], start)
                    yield name, offset, offset + len(" ".join(words))


_CLOSING = re.compile(
    r"(?:Sincerely|Very truly yours|Yours sincerely|Yours faithfully|Best regards|Kind regards|Regards|Best|"
    r"Respectfully submitted|Respectfully|Thank you)[,.]?[ \t]*\n(?:[ \t]*\n)*[ \t]*"
    + _PERSON_NAME
    + r"[ \t]*(?=\n|$)"
)
_SIGNATURE_BEFORE_OATH = re.compile(
    r"(?:^|\n)[ \t]*" + _PERSON_NAME + r"[ \t]*\n(?:[ \t]*\n)?[ \t]*(?:Sworn|Executed|Subscribed)"
)
_NOT_NAME_WORDS = word_set("not_name_words")
_CAPTION = re.compile(
    rf"\b(?P<left>{_NAME_WORD}(?:[ ]{_NAME_WORD}){{0,5}}(?:,?[ ]{_ORG_SUFFIX})?)[ ]v\.[ ]"
    rf"(?P<right>{_NAME_WORD}(?:[ ]{_NAME_WORD}){{0,5}}(?:,?[ ]{_ORG_SUFFIX})?)"
)


# Where words glued by a PDF's extraction join what precedes a name to it: before an all-capitals
# word ("OfficerBLACKSTONE") or after a glued "and", "between", "or", "the" ("andPreCheck").
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
    for prefix in (_TITLED_PERSON_OF, _ROLE_OF, _LEADING_NOISE):
        noise = prefix.match(raw)
        if noise:
            raw, start = raw[noise.end() :], start + noise.end()
    raw = raw.rstrip(",")
    words = [w for w in re.split(r"[\s,]+", raw) if w]
    if len(words) < 2 or not (words[0][:1].isupper() or words[0][:1].isdigit()) or "Court" in words:
        return None  # courts are not listed (docs/decisions/0007)
    return raw, start


def org_key(name: str) -> str:
    """Deduplication key: case, punctuation and a leading "The" do not make a new organisation."""
    key = re.sub(r"[^\w&]+", " ", name.casefold()).strip()
    return re.sub(r"^the ", "", key)


def _title_case(name: str) -> str:
    return " ".join(w if len(w) <= 2 and w.endswith(".") else w.capitalize() for w in name.split())


# "a Delaware corporation", "a British Columbia Corporation": a description of a party, not a name.
_DESCRIBED = re.compile(r"(?:^|\s)an?\s+$")


def _generic_company(name: str, vocabulary: _Vocabulary) -> bool:
    """ "Investment Company", "WHEREAS, Company": one ordinary word before a legal form is a
    description or a defined term, not a name."""
    words = [w for w in re.split(r"[\s,]+", name) if w]
    return len(words) == 2 and words[0].casefold() in vocabulary.lower


def _organizations(
    pages: list[Page], excluded: SpansByPage, model: _ModelNames, vocabulary: _Vocabulary
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


_ORG_AFTER = re.compile(rf",?[ ]{_ORG_SUFFIX}")


def _valid_person(name: str) -> bool:
    words = name.split()
    if not words or any(w.strip(".,") in _NOT_NAME_WORDS or w in _ORG_WORDS for w in words):
        return False
    if any(w.strip(",") in _LEGAL_FORM_WORDS or w.strip(".,") in _LEGAL_FORM_WORDS for w in words):
        return False  # "Cooley LLP", "Sandhill Amusements, Inc." are firms
    return not all(len(w.rstrip(".")) == 1 for w in words)


def _person_mentions(pages: list[Page], excluded: SpansByPage) -> Iterator[tuple[str, int, int, int]]:
    for page in pages:
        spans = excluded.get(page.number, [])
        for name, start, end in _panel_names(page.text):
            if _valid_person(name) and not overlaps(spans, start, end):
                yield name, page.number, start, end
        for pattern in [*_PERSON_RULES, _CLOSING, _SIGNATURE_BEFORE_OATH]:
            for match in pattern.finditer(page.text):
                for group in ("person", "caps", "second"):
                    if group not in pattern.groupindex or match.group(group) is None:
                        continue
                    start, end = match.span(group)
                    name = match.group(group)
                    if group == "caps":
                        name = _title_case(name)
                    if _ORG_AFTER.match(page.text, end):
                        continue  # "Defendant Meridian Credit Services, LLC" is a company
                    if _valid_person(name) and not overlaps(spans, start, end):
                        yield name, page.number, start, end


def _caption_parties(pages: list[Page], excluded: SpansByPage) -> Iterator[tuple[str, int, int, int, bool]]:
    """Parties of "X v. Y" captions of this matter: (name, page, start, end, is_organisation)."""
    for page in pages:
        spans = excluded.get(page.number, [])
        for match in _CAPTION.finditer(page.text):
            if overlaps(spans, match.start(), match.end()):
                continue
            for side in ("left", "right"):
                raw = match.group(side)
                cleaned = _LEADING_NOISE.sub("", raw)
                start = match.start(side) + len(raw) - len(cleaned)
                cleaned = cleaned.rstrip(",")
                if re.search(_ORG_SUFFIX + "$", cleaned):
                    continue  # organisations are found by the suffix rule already
                if cleaned.isupper():
                    cleaned = _title_case(cleaned)
                if _valid_person(cleaned) and len(cleaned.split()) <= 3:
                    yield cleaned, page.number, start, start + len(cleaned), False


def _person_key_text(name: str) -> str:
    return " ".join(_person_key(name))


def _person_key(name: str) -> tuple[str, ...]:
    return tuple(w.strip(".").casefold() for w in name.split())


def _compatible(short: tuple[str, ...], full: tuple[str, ...]) -> bool:
    """ "Kessler", "B. Kessler", "Brian Kessler" (and, signing an e-mail, "Brian") can all name
    "Brian Kessler"."""
    if len(short) == 1 and len(full) > 1 and short[0] == full[0]:
        return True
    if short[-1] != full[-1] or len(short) > len(full):
        return False
    if len(short) == 1:
        return True
    first_short, first_full = short[0], full[0]
    return first_short == first_full or (len(first_short) == 1 and first_full.startswith(first_short))


def _people(pages: list[Page], excluded: SpansByPage, org_names: set[str], model: _ModelNames) -> EntitySet:
    mentions = list(_person_mentions(pages, excluded))
    mentions.extend(model.people)
    for name, page, start, end, _is_org in _caption_parties(pages, excluded):
        mentions.append((name, page, start, end))
    # A person's "name" that is part of an organisation's ("Summit Roofing") is that organisation.
    mentions = [m for m in mentions if not any(org.startswith(_person_key_text(m[0])) for org in org_names)]
    # The fullest form of each person wins; shorter forms attach to it when unambiguous.
    names = sorted({m[0] for m in mentions}, key=lambda n: (-len(n.split()), -len(n), n))
    canonical: dict[str, str] = {}
    for name in names:
        key = _person_key(name)
        matches = [c for c in dict.fromkeys(canonical.values()) if _compatible(key, _person_key(c))]
        if len(matches) == 1:
            canonical[name] = matches[0]
        elif not matches:
            canonical[name] = name
        # Several candidates ("Mr. Brennan" in a family): ambiguous, so not attributed to anyone.
    found = EntitySet()
    for name, page, start, end in sorted(mentions, key=lambda m: (m[1], m[2])):
        if name in canonical:
            target = canonical[name]
            found.add(" ".join(_person_key(target)), target, page, start, end)
    _drop_single_words_inside_orgs(found, org_names)
    return found


def _drop_single_words_inside_orgs(found: EntitySet, org_names: set[str]) -> None:
    for key in list(found.items):
        if " " not in key and any(key in org.split() for org in org_names):
            del found.items[key]


def _add_more_occurrences(pages: list[Page], found: EntitySet) -> None:
    """Every other place the exact name appears, so search can highlight them all."""
    for entity in found.items.values():
        pattern = re.compile(rf"(?<![\w]){re.escape(entity.text)}(?![\w])")
        for page in pages:
            for match in pattern.finditer(page.text):
                entity.occurrences.append((page.number, match.start(), match.end()))


Mention = tuple[str, int, int, int]  # (name, page, start, end)


@dataclass
class _ModelNames:
    people: list[Mention] = field(default_factory=list)
    organizations: list[Mention] = field(default_factory=list)


# A name never spans a blank line: what follows it is another block ("the First Circuit\n\nNo").
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
# Generational suffixes the model leaves out of a person's span.
_PERSON_SUFFIX = re.compile(r",?[ ]?\n?[ \t]*(?:Jr\.|Sr\.|III|II|IV)(?![\w])")
# The rest of a name broken across lines: "with whom Aaron\nM. Frey, Attorney General".
_NAME_CONTINUED = re.compile(r"[ \t]*\n[ \t]*(?:[A-Z]\.[ ])?[A-Z][a-z'\u2019-]+(?=,|[ ]and\b)")
_ORG_HEAD_WORDS = word_set("organization_head_words")
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
_FUNCTION_WORDS = frozenset({"of", "the", "and", "for", "in", "on", "de", "&"})
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
    }
)
# Lower-case words a name may contain ("Bend the Arc", "Union for Reform Judaism").
_NAME_LINK_WORDS = frozenset(
    {"of", "the", "for", "and", "de", "du", "la", "del", "von", "van", "on", "in", "&"}
)
# Words glued by a PDF's extraction ("Solarand Vivint", "AgreementbetweenCuro").
_GLUED_WORD = re.compile(r"[a-z](?:and|the|between|or)[A-Z]")
_COURT_DISTRICT = re.compile(r"\b(?:Northern|Southern|Eastern|Western|Middle|Central) District\b")
_DEFINED_TERM = re.compile(r"[\"\u201c]([A-Z][^\"\u201d\n]{1,60})[\"\u201d]")


@dataclass
class _Vocabulary:
    """What the whole document says about words: those it writes in lower case (so they are
    ordinary words, not names) and the terms it defines in quotes ("Confidential Information")."""

    lower: frozenset[str]
    defined: frozenset[str]

    @classmethod
    def of(cls, pages: list[Page]) -> _Vocabulary:
        text = "\n".join(page.text for page in pages)
        lower = frozenset(re.findall(r"(?<![\w])[a-z][a-z'-]+(?![\w])", text))
        defined = frozenset(" ".join(m.group(1).split()).casefold() for m in _DEFINED_TERM.finditer(text))
        return cls(lower, defined)

    def has_proper_word(self, name: str) -> bool:
        """Some word of the name is never written in lower case in the document: a proper name,
        not a capitalised common phrase ("Marketing Materials", "Appearance Form")."""
        words = [w.strip(".,'\u2019") for w in name.split()]
        content = [w.casefold() for w in words if len(w) > 1 and w.casefold() not in _FUNCTION_WORDS]
        return any(w not in self.lower for w in content)


def _model_organization(name: str, vocabulary: _Vocabulary) -> bool:
    words = name.split()
    if len(words) < 2 or not words[0][:1].isupper() or name.casefold() in vocabulary.defined:
        return False
    if words[-1].casefold() in vocabulary.defined:
        return False  # ends on a defined role ("the 'Individual'"): "Release Individual"
    if any(w.strip(".,") in _NOT_ORG_WORDS for w in words) or any(c.isdigit() for c in name):
        return False
    if _GLUED_WORD.search(name) or _COURT_DISTRICT.search(name) or _COURT_PART.search(name):
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
    if any(w in _ORG_HEAD_WORDS or w in _ORG_WORDS for w in words):
        return True
    # A name has a word that is not ordinary English, or not written in lower case in this document.
    known = english_words()
    content = [w.strip(".,'\u2019").casefold() for w in words if w.casefold() not in _FUNCTION_WORDS]
    return vocabulary.has_proper_word(name) and not all(w in known for w in content)


def _model_person(name: str, vocabulary: _Vocabulary) -> bool:
    words = name.split()
    if len(words) < 2 or not _valid_person(name) or any(c.isdigit() for c in name):
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
# A line of wrapped prose: long, or ending on a word that must go on.
_WRAPPED_MIN_CHARS = 40
_ENDS_ON_LINK = re.compile(r"(?:\b(?i:of|for|the|and|with whom)|&)$")


def _join_wrapped_lines(text: str) -> str:
    """The text with the line breaks of wrapped prose turned into spaces, so that a name the
    wrapping cut ("Athens\nChurch of the Open Bible", "Foundation of\nNorthern California") reaches
    the model whole. Lengths and offsets are unchanged; short lines (captions, counsel blocks,
    addresses) keep their breaks unless they end on a word that must go on ("of", "for", "and").
    Line by line: linear in the text's length."""
    lines = text.split("\n")
    out = []
    for line, following in itertools.pairwise(lines):
        wrapped = following.strip() and (len(line) >= _WRAPPED_MIN_CHARS or _ENDS_ON_LINK.search(line))
        out.append(line + (" " if wrapped else "\n"))
    out.append(lines[-1])
    return "".join(out)


def _model_names(pages: list[Page], excluded: SpansByPage) -> _ModelNames:
    """The model's people and organisations, cleaned and checked by the rules."""
    found = _ModelNames()
    vocabulary = _Vocabulary.of(pages)
    for original in pages:
        page = Page(number=original.number, text=_join_wrapped_lines(original.text))
        spans = excluded.get(page.number, [])
        for model_label, raw_start, raw_end in model_spans(page.text):
            label = model_label
            span = _model_span(page.text, *_unglue(page.text, raw_start, raw_end))
            if span is None or overlaps(spans, span[1], span[2]):
                continue  # parties of cited cases belong to their citation
            name, start, end = span
            noise = _LEADING_NOISE.match(name)
            if noise:  # "Appellant Vanessa St. Pierre", "The Rock Church" keeps its "The" (org_key drops it)
                if not name[noise.end() :]:
                    continue
                if label == "PERSON" or not noise.group(0).startswith("The"):
                    cut = len(page.text[start:end]) - len(page.text[start:end][noise.end() :])
                    name, start = " ".join(name[noise.end() :].split()), start + cut
            words = name.split()
            if not words:
                continue
            if label == "PERSON" and words[-1] in _ORG_HEAD_WORDS:
                label = "ORG"  # "Thomas More Society", "Machias Valley Baptist"
            if label == "ORG":
                tail = _OF_TAIL.match(page.text, end) if words[-1] in _ORG_HEAD_WORDS else None
                if tail:  # "Athens Church" + " of the Open Bible"
                    name, end = f"{name} {' '.join(tail.group(0).split())}", tail.end()
                if _model_organization(name, vocabulary):
                    found.organizations.append((name, page.number, start, end))
                continue
            if "\n" in page.text[start:end] or "@" in name:
                continue  # a caption's or a block's lines are separate names
            if _ORG_AFTER.match(page.text, end):
                continue  # "C. R. Bard, Inc." is a company, found by its legal form
            continued = _NAME_CONTINUED.match(page.text, end) if len(words) == 1 else None
            if continued:
                name, end = f"{name} {' '.join(continued.group(0).split())}", continued.end()
            suffix = _PERSON_SUFFIX.match(page.text, end)
            if suffix:
                name, end = f"{name}{' '.join(suffix.group(0).split(chr(10)))}", suffix.end()
                name = " ".join(name.split())
            if name.isupper():
                name = _title_case(name)
            # A lone word is a surname or a first name the model is least sure of; the rules find
            # the surnames that matter (judges, justices, caption parties).
            if not _model_person(name, vocabulary):
                continue
            found.people.append((name, page.number, start, end))
    return found


def find_names(pages: list[Page], excluded: SpansByPage) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(people, organisations), leaving out names inside the `excluded` spans (cited cases)."""
    model = _model_names(pages, excluded)
    # The model sometimes calls a person an organisation ("Edward Thornbury" in a memo heading): a
    # name the person rules or the model elsewhere place as a person is one.
    person_keys = {_person_key_text(m[0]) for m in [*_person_mentions(pages, excluded), *model.people]}
    model.organizations = [
        m
        for m in model.organizations
        if m[0].split()[-1] in _ORG_HEAD_WORDS or _person_key_text(m[0]) not in person_keys
    ]
    organizations = _organizations(pages, excluded, model, _Vocabulary.of(pages))
    people = _people(pages, excluded, set(organizations.items), model)
    _add_more_occurrences(pages, people)
    _add_more_occurrences(pages, organizations)
    return people.as_list(), organizations.as_list()
