"""People found by the places names stand in legal writing: titles, roles, signatures, captions,
header fields, panels and justices; the model's people (model_names.py) are merged in and shorter
forms attach to the fullest one."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..resources import word_set
from ..types import Page
from .base import EntitySet, SpansByPage, overlaps
from .name_rules import (
    LEADING_NOISE,
    NAME_WORD,
    ORG_AFTER,
    ORG_SUFFIX,
    ModelNames,
    is_person_name,
    person_key,
    person_key_text,
    title_case,
    valid_person,
)
from .ner import english_words

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
        rf"(?:^|\n|[ \t]{{2}})[ \t]*(?:By:?[ ]*)?/s/[ ]*{_PERSON_NAME}(?=[ ]*(?:,|\n|$))",
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
        # Counsel in capitals, their firm and town, and whom they argued for: "EAMONN DORNAN, Dornan &
        # Associates, P.L.L.C., New\nYork, New York, for Plaintiff-Appellant."
        (
            rf"(?:^|\n)[ \t]*{_CAPS_NAME},[ ][^;]{{0,160}}?\bfor[ ](?:the[ ])?"
            r"(?:Plaintiffs?|Defendants?|Appell(?:ant|ee)s?|Petitioners?|Respondents?)\b"
        ),
        # A party in capitals with the office it is sued in: "ANDREA QUARANTILLO, District Director",
        # "JANET NAPOLITANO,1 Secretary", "ERIC FRANKLIN, Warden".
        (
            rf"(?:^|\n|;[ ])[ \t]*{_CAPS_NAME},\d?\s(?:District[ ])?(?:Director|Secretary|Administrator"
            r"|Commissioner|Warden|Sheriff|Governor|Mayor|Attorney[ ]General|Chief|Trustee|Superintendent)\b"
        ),
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
# The list runs to its last "Judge": "B ROWN and K AVANAUGH, Circuit Judges, and WILLIAMS, Senior
# Circuit Judge.", "BATCHELDER, Chief Judge; SILER and GILMAN, Circuit Judges.", "LEVAL, STRAUB, AND
# WESLEY, Circuit Judges."
_PANEL = re.compile(r"(?:\bBefore:?\s+|\bPer[ ]Curiam[ ]\()(?P<list>[^.:]{1,300})\bJudges?\b")
# A name in small capitals as some PDFs' text layer gives it: "B ROWN", "K AVANAUGH".
_SMALL_CAPS = re.compile(r"\b([A-Z])[ ]([A-Z]{2,})\b")
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
            for item in re.finditer(r"[^,;\n]+", match.group("list")):
                raw = re.sub(r"^\s*(?:(?i:and)\s+)?", "", item.group(0)).rstrip()
                start = match.start("list") + item.start()
                for part in re.split(r"\s+(?i:and)\s+", raw):
                    written = [w for w in part.split() if w not in _PANEL_NOISE]
                    words = _SMALL_CAPS.sub(r"\1\2", " ".join(written)).split()
                    if not words or len(words) > 3 or not all(w[:1].isupper() for w in words):
                        continue
                    name = " ".join(words)
                    if name.isupper():
                        name = title_case(name)
                    offset = text.find(written[0], start)
                    yield name, offset, offset + len(" ".join(written))


_CLOSING = re.compile(
    r"(?:Sincerely|Very truly yours|Yours sincerely|Yours faithfully|Best regards|Kind regards|Regards|Best|"
    r"Respectfully submitted|Respectfully|Thank you)[,.]?[ \t]*\n(?:[ \t]*\n)*[ \t]*"
    + _PERSON_NAME
    + r"[ \t]*(?=\n|$)"
)
_SIGNATURE_BEFORE_OATH = re.compile(
    r"(?:^|\n)[ \t]*" + _PERSON_NAME + r"[ \t]*\n(?:[ \t]*\n)?[ \t]*(?:Sworn|Executed|Subscribed)"
)
_CAPTION = re.compile(
    rf"\b(?P<left>{NAME_WORD}(?:[ ]{NAME_WORD}){{0,5}}(?:,?[ ]{ORG_SUFFIX})?)[ ]v\.[ ]"
    rf"(?P<right>{NAME_WORD}(?:[ ]{NAME_WORD}){{0,5}}(?:,?[ ]{ORG_SUFFIX})?)"
)


# Where words glued by a PDF's extraction join what precedes a name to it: before an all-capitals


def person_mentions(pages: list[Page], excluded: SpansByPage) -> Iterator[tuple[str, int, int, int]]:
    for page in pages:
        spans = excluded.get(page.number, [])
        for name, start, end in _panel_names(page.text):
            if valid_person(name) and not overlaps(spans, start, end):
                yield name, page.number, start, end
        for pattern in [*_PERSON_RULES, _CLOSING, _SIGNATURE_BEFORE_OATH]:
            for match in pattern.finditer(page.text):
                for group in ("person", "caps", "second"):
                    if group not in pattern.groupindex or match.group(group) is None:
                        continue
                    start, end = match.span(group)
                    name = match.group(group)
                    if group == "caps":
                        name = title_case(name)
                    if ORG_AFTER.match(page.text, end):
                        continue  # "Defendant Meridian Credit Services, LLC" is a company
                    if valid_person(name) and not overlaps(spans, start, end):
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
                if side == "left" and page.text[match.start(side) - 1 : match.start(side)] == "-":
                    # A docket number's judge initials glued before the caption ("2:22-cv-06575-JMV-LDW
                    # KOONES v. KEHATI"): the first word is the number's.
                    raw = raw.partition(" ")[2]
                cleaned = LEADING_NOISE.sub("", raw)
                start = match.end(side) - len(cleaned)  # cleaned is an end of the group
                cleaned = cleaned.rstrip(",")
                if re.search(ORG_SUFFIX + "$", cleaned):
                    continue  # organisations are found by the suffix rule already
                if cleaned.isupper():
                    cleaned = title_case(cleaned)
                if valid_person(cleaned) and len(cleaned.split()) <= 3:
                    yield cleaned, page.number, start, start + len(cleaned), False


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


# A generational suffix after a name ("Eric H. Holder, Jr.", "Marshall L. Davidson, III").
_SUFFIX_AFTER = re.compile(r",?[ ](?:Jr|JR|Sr|SR)\.?(?![\w])|,?[ ](?:III|II|IV)(?![\w])")
# A name alone on its line, as in counsel lists and address blocks: "David E. Barry", "R. Daniel
# Prentiss".
_NAME_LINE = re.compile(
    r"(?m)^[ \t]*(?P<person>(?:[A-Z]\.[ ])?[A-Z][a-z]+(?:[ ][A-Z]\.)?"
    r"(?:[ ][A-Z](?:['\u2019][A-Z])?[a-z'\u2019]+(?:-[A-Z][a-z]+)?){1,2})[ \t]*$"
)


def _with_suffix(pages: list[Page], mention: tuple[str, int, int, int]) -> tuple[str, int, int, int]:
    name, page, start, end = mention
    suffix = _SUFFIX_AFTER.match(pages[page - 1].text, end)
    if suffix is None or re.search(r"(?:Jr|Sr|II|IV)\.?$", name):
        return mention
    written = suffix.group(0)
    return f"{name}{written.replace('JR', 'Jr').replace('SR', 'Sr')}", page, start, suffix.end()


def _name_lines(pages: list[Page], excluded: SpansByPage) -> Iterator[tuple[str, int, int, int]]:
    """Names alone on their line that probablepeople reads as a person's and that have a word
    which is not ordinary English ("David E. Barry", not "Claim History"), or that stand in a list
    of such names, one a line ("Kelly M. Moore" among counsel)."""
    known = english_words()
    for page in pages:
        spans = excluded.get(page.number, [])
        names: dict[int, tuple[str, int, int]] = {}  # by line number
        proper: set[int] = set()  # lines whose name has a word that is not ordinary English
        line, counted = 0, 0
        for match in _NAME_LINE.finditer(page.text):
            name, (start, end) = match.group("person"), match.span("person")
            if not valid_person(name) or overlaps(spans, start, end) or not is_person_name(name):
                continue
            line, counted = line + page.text.count("\n", counted, start), start  # matches come in order
            names[line] = (name, start, end)
            if not all(w.strip(".").casefold() in known for w in name.split() if len(w.strip(".")) > 1):
                proper.add(line)
        for line, (name, start, end) in names.items():
            if proper & {line - 1, line, line + 1}:
                yield name, page.number, start, end


def find_people(
    pages: list[Page], excluded: SpansByPage, org_names: set[str], model: ModelNames
) -> EntitySet:
    mentions = list(person_mentions(pages, excluded))
    mentions.extend(model.people)
    mentions.extend(_name_lines(pages, excluded))
    for name, page, start, end, _is_org in _caption_parties(pages, excluded):
        mentions.append((name, page, start, end))
    mentions = [_with_suffix(pages, m) for m in mentions]
    # A person's "name" that is part of an organisation's ("Summit Roofing") is that organisation.
    mentions = [m for m in mentions if not any(org.startswith(person_key_text(m[0])) for org in org_names)]
    # The fullest form of each person wins; shorter forms attach to it when unambiguous.
    names = sorted({m[0] for m in mentions}, key=lambda n: (-len(n.split()), -len(n), n))
    canonical: dict[str, str] = {}
    for name in names:
        key = person_key(name)
        matches = [c for c in dict.fromkeys(canonical.values()) if _compatible(key, person_key(c))]
        if len(matches) == 1:
            canonical[name] = matches[0]
        elif not matches:
            canonical[name] = name
        # Several candidates ("Mr. Brennan" in a family): ambiguous, so not attributed to anyone.
    found = EntitySet()
    for name, page, start, end in sorted(mentions, key=lambda m: (m[1], m[2])):
        if name in canonical:
            target = canonical[name]
            found.add(" ".join(person_key(target)), target, page, start, end)
    _drop_single_words_inside_orgs(found, org_names)
    return found


def _drop_single_words_inside_orgs(found: EntitySet, org_names: set[str]) -> None:
    for key in list(found.items):
        if " " not in key and any(key in org.split() for org in org_names):
            del found.items[key]
