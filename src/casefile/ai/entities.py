"""Entities by rules, with offsets: people, organisations, dates, money and legal citations.

No statistical model: the research (docs/research/local-ai-options.md §5) found that a small
English NER model mislabels exactly the things legal text is full of (amounts, numeric dates,
captions), while rules do not. Citations come from eyecite (Free Law Project), with a few rules for
what it misses (sections with letter suffixes such as `15 U.S.C. § 1692c`, Illinois `ILCS`,
`Fed. R. Civ. P.`).

Conventions (also in docs/decisions/0007-ai-pipeline.md):
- dates: full calendar dates only, as ISO `YYYY-MM-DD`. Ambiguous numeric dates with slashes or
  dashes are read month-first (US usage: `05/01/2024` is 1 May); when the first number cannot be a
  month (`21/03/2025`) day-first is used. Dotted numeric dates (`15.06.2024`) are day-first
  (European usage).
- money: `{"amount": "12500.00", "currency": "USD"}`, symbols and codes mapped to ISO 4217;
  `1.234,56` (decimal comma) is understood; `$3.2 million` is `3200000.00`.
- citations: the normalised citation string is the `value` (`347 U.S. 483`,
  `42 U.S.C. § 1983`: subsections dropped), with eyecite's fields.
- parties of *cited* cases stay on their citation (plaintiff/defendant) and are not listed as
  people or organisations of the document: they are not actors in the matter.

Items: `{"text", "value"?, "occurrences": [{"page", "start", "end"}], ...}`, one per normalised
value, in order of first occurrence.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

from casefile.ai.types import Page

logging.getLogger("eyecite").setLevel(logging.ERROR)  # it warns about every ambiguous overlap


@dataclass
class Entity:
    key: str
    text: str
    value: Any = None
    occurrences: list[tuple[int, int, int]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        item: dict[str, Any] = {"text": self.text}
        if self.value is not None:
            item["value"] = self.value
        item.update(self.extra)
        item["occurrences"] = [{"page": p, "start": s, "end": e} for p, s, e in sorted(set(self.occurrences))]
        return item


class EntitySet:
    """Entities of one category, deduplicated by key, in order of first occurrence."""

    def __init__(self) -> None:
        self.items: dict[str, Entity] = {}

    def add(self, key: str, text: str, page: int, start: int, end: int, value: Any = None) -> Entity:  # noqa: PLR0917
        entity = self.items.get(key)
        if entity is None:
            entity = self.items[key] = Entity(key, text, value)
        entity.occurrences.append((page, start, end))
        return entity

    def as_list(self) -> list[dict[str, Any]]:
        ordered = sorted(self.items.values(), key=lambda e: min(e.occurrences))
        return [e.as_dict() for e in ordered]


def extract_entities(pages: list[Page]) -> dict[str, list[dict[str, Any]]]:
    citations, excluded = _citations(pages)
    people, organizations = _names(pages, excluded)
    return {
        "people": people,
        "organizations": organizations,
        "dates": _dates(pages),
        "money": _money(pages),
        "citations": citations,
    }


# -- dates --------------------------------------------------------------------------------------

_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_MONTH = (
    r"(?P<month>January|February|March|April|May|June|July|August|September|October|November|December"
    r"|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\.?"
)
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:1[89]|20|21)\d\d)"
_DATE_PATTERNS = [
    re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b"),  # March 3, 2024
    re.compile(rf"\b{_DAY}\s+(?:day\s+of\s+)?{_MONTH},?\s+{_YEAR}\b"),  # 3 March 2024, 3rd day of March, 2024
    re.compile(rf"\b{_YEAR}-(?P<m>[01]?\d)-(?P<d>[0-3]?\d)\b"),  # 2024-05-17
    re.compile(
        r"\b(?P<a>[0-3]?\d)(?P<sep>[/-])(?P<b>[0-3]?\d)(?P=sep)(?P<year>(?:19|20|21)\d\d)\b"
    ),  # 05/01/2024
    re.compile(r"\b(?P<d>[0-3]?\d)\.(?P<m>[01]?\d)\.(?P<year>(?:19|20|21)\d\d)\b"),  # 15.06.2024
]


def _date_value(match: re.Match[str]) -> date | None:
    groups = match.groupdict()
    year = int(groups["year"])
    if groups.get("month"):
        month, day = _MONTHS[groups["month"].lower().rstrip(".")], int(groups["day"])
    elif groups.get("a"):
        first, second = int(groups["a"]), int(groups["b"])
        # US month-first, unless the first number cannot be a month.
        month, day = (first, second) if first <= 12 else (second, first)
    else:
        month, day = int(groups["m"]), int(groups["d"])
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _dates(pages: list[Page]) -> list[dict[str, Any]]:
    found = EntitySet()
    for page in pages:
        taken: list[tuple[int, int]] = []
        for pattern in _DATE_PATTERNS:
            for match in pattern.finditer(page.text):
                if any(match.start() < e and s < match.end() for s, e in taken):
                    continue
                value = _date_value(match)
                if value is not None:
                    taken.append(match.span())
                    iso = value.isoformat()
                    found.add(iso, match.group(0), page.number, match.start(), match.end(), iso)
    return found.as_list()


# -- money --------------------------------------------------------------------------------------

_SYMBOLS = {"$": "USD", "US$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "C$": "CAD", "A$": "AUD"}
_CODES = {"USD", "EUR", "GBP", "CHF", "JPY", "CAD", "AUD"}
# A bare "pounds" is as often a weight as money: only "pounds sterling" counts.
_WORDS = {"dollars": "USD", "euros": "EUR", "euro": "EUR", "pounds sterling": "GBP"}
_NUMBER = r"(?P<number>\d{1,3}(?:[,.\u00a0 ]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?)"
_SCALE = r"(?:\s*(?P<scale>million|billion|thousand|mn|bn|m|k)\b)?"
_MONEY_PATTERNS = [
    re.compile(rf"(?P<cur>US\$|C\$|A\$|[$€£¥])\s?{_NUMBER}{_SCALE}"),
    re.compile(rf"\b(?P<cur>USD|EUR|GBP|CHF|JPY|CAD|AUD)\s?{_NUMBER}{_SCALE}"),
    re.compile(
        rf"{_NUMBER}{_SCALE}\s?(?P<cur>USD|EUR|GBP|CHF|JPY|CAD|AUD|dollars|euros|euro|pounds sterling)\b"
    ),
]
_SCALES = {"thousand": 1_000, "k": 1_000, "million": 1_000_000, "mn": 1_000_000, "m": 1_000_000}
_SCALES |= {"billion": 1_000_000_000, "bn": 1_000_000_000}


def _parse_number(raw: str) -> Decimal | None:
    raw = raw.replace("\u00a0", "").replace(" ", "")
    last_dot, last_comma = raw.rfind("."), raw.rfind(",")
    if last_dot >= 0 and last_comma >= 0:
        decimal_mark = "." if last_dot > last_comma else ","
    elif last_comma >= 0:
        # "1,250" is a thousand separator; "12,50" is a decimal comma.
        decimal_mark = "," if len(raw) - last_comma - 1 in (1, 2) else ""
    elif last_dot >= 0:
        # "5.000.000" groups thousands; "4.25" is a decimal point.
        decimal_mark = "" if raw.count(".") > 1 or (len(raw) - last_dot - 1 == 3 and raw[0] != "0") else "."
    else:
        decimal_mark = ""
    thousands = {",": ".", ".": ",", "": ".,"}[decimal_mark]
    cleaned = raw.translate({ord(c): None for c in thousands})
    if decimal_mark == ",":
        cleaned = cleaned.replace(",", ".")
    try:
        return Decimal(cleaned)
    except InvalidOperation:
        return None


def _money(pages: list[Page]) -> list[dict[str, Any]]:
    found = EntitySet()
    for page in pages:
        taken: list[tuple[int, int]] = []
        for pattern in _MONEY_PATTERNS:
            for match in pattern.finditer(page.text):
                if any(match.start() < e and s < match.end() for s, e in taken):
                    continue
                amount = _parse_number(match.group("number"))
                if amount is None:
                    continue
                # "$4.8 million": a scale word multiplies; a bare "m" only right after a number.
                scale = (match.group("scale") or "").lower()
                amount *= _SCALES.get(scale, 1)
                cur = match.group("cur")
                currency = _SYMBOLS.get(cur) or (cur if cur in _CODES else _WORDS.get(cur.lower(), "USD"))
                value = {"amount": f"{amount.quantize(Decimal('0.01'))}", "currency": currency}
                taken.append(match.span())
                key = f"{value['currency']} {value['amount']}"
                found.add(key, match.group(0), page.number, match.start(), match.end(), value)
    return found.as_list()


# -- citations ----------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _eyecite() -> Any:
    import eyecite

    eyecite.get_citations("See 347 U.S. 483 (1954).")  # builds its tokenizer once (~0.1 s)
    return eyecite


def warm_up() -> None:
    _eyecite()


_SECTION = re.compile(r"§§?\s*(?P<section>\d[\dA-Za-z.\-]*)")
# What may name a code right before "§": "42 U.S.C.", "Cal. Civ. Code", "Mass. Gen. Laws ch. 149,".
_CODE_BEFORE = re.compile(r"((?:\d+\s+)?(?:(?:[A-Z][A-Za-z.]*|ch\.\s\d+[A-Z]?,)\s+){1,7})$")
_ILCS = re.compile(r"\b(?P<chapter>\d+)\s+ILCS\s+(?P<section>\d+/[\dA-Za-z.\-]*[\dA-Za-z])")
_COURT_RULE = re.compile(
    r"\bFed\.\s?R\.\s?(?P<kind>Civ|Crim|App|Evid|Bankr)\.\s?P\.\s?(?P<rule>\d+(?:\.\d+)?)"
)


def _section_after(text: str, position: int) -> tuple[str, str, int] | None:
    """The section number following the `§` at or after `position`: (marker, section, end)."""
    match = _SECTION.match(text, position)
    if match is None:
        return None
    section = match.group("section").rstrip(".-")
    marker = "§§" if text.startswith("§§", position) else "§"
    return marker, section, match.start("section") + len(section)


def _normalise_code(code: str) -> str:
    return re.sub(r"\s+", " ", code).strip()


def _citations(pages: list[Page]) -> tuple[list[dict[str, Any]], dict[int, list[tuple[int, int]]]]:
    """Citations, and per page the spans of cited cases' names (not the document's own parties)."""
    found = EntitySet()
    excluded: dict[int, list[tuple[int, int]]] = {}
    for page in pages:
        excluded[page.number] = _page_citations(page, found)
    return found.as_list(), excluded


def _page_citations(page: Page, found: EntitySet) -> list[tuple[int, int]]:
    eyecite = _eyecite()
    text = page.text
    taken: list[tuple[int, int]] = []
    excluded: list[tuple[int, int]] = []
    last_case: Entity | None = None
    for citation in eyecite.get_citations(text):
        kind = type(citation).__name__
        start, end = citation.span()
        if kind == "FullCaseCitation":
            last_case = _add_case(found, citation, page.number)
            excluded.append((_case_name_start(text, citation), end))
        elif kind == "ShortCaseCitation":
            last_case = _add_short_case(found, citation, page.number) or last_case
        elif kind == "IdCitation" and last_case is not None:
            last_case.occurrences.append((page.number, start, end))
        elif kind == "FullLawCitation" and "§" in citation.matched_text():
            at = start + citation.matched_text().index("§")
            parsed = _section_after(text, at)
            if parsed is not None:
                _add_law(found, text[start:at], parsed, page.number, start, citation)
                taken.append((start, parsed[2]))
    _add_missed_sections(found, page, taken)
    _add_rule_citations(found, page)
    return excluded


def _case_name_start(text: str, citation: Any) -> int:
    """Where the cited case's name begins (eyecite's full_span is best effort): the start of the
    "X v. Y," run before the reporter citation, not earlier than the previous sentence end."""
    start = int(citation.span()[0])
    window_start = max(0, start - 200)
    window = text[window_start:start]
    v_at = window.rfind(" v. ")
    if v_at < 0:
        full = int(citation.full_span()[0]) if hasattr(citation, "full_span") else start
        return min(full, start)
    before = window[:v_at]
    boundary = max(before.rfind(m) for m in (". ", "; ", "(", "\n", ": "))
    # "Co. v." or "Corp. v.": an abbreviation is not a sentence end; look one boundary further.
    while boundary > 0 and re.search(
        r"\b(?:Co|Corp|Inc|Ltd|Bros|Ass'n|Nat'l|Constr|Int'l)$", before[:boundary]
    ):
        boundary = max(before[:boundary].rfind(m) for m in (". ", "; ", "(", "\n", ": "))
    return window_start + max(boundary + 1, 0)


def _add_case(found: EntitySet, citation: Any, page: int) -> Entity:
    groups = citation.groups
    value = f"{groups.get('volume', '')} {citation.corrected_reporter()} {groups.get('page', '')}".strip()
    start, end = citation.span()
    entity = found.add(value, citation.matched_text(), page, start, end, value)
    if not entity.extra:
        metadata = citation.metadata
        entity.extra = {
            "type": "case",
            "volume": groups.get("volume"),
            "reporter": citation.corrected_reporter(),
            "page": groups.get("page"),
            "plaintiff": getattr(metadata, "plaintiff", None),
            "defendant": getattr(metadata, "defendant", None),
            "pin_cite": getattr(metadata, "pin_cite", None),
            "court": getattr(metadata, "court", None),
            # eyecite's year is best effort in string citations: only kept when beside the cite.
            "year": getattr(metadata, "year", None) if _year_is_local(citation) else None,
        }
        entity.extra = {k: v for k, v in entity.extra.items() if v is not None}
    return entity


def _year_is_local(citation: Any) -> bool:
    year = getattr(citation.metadata, "year", None)
    if not year:
        return False
    after = citation.document.plain_text[citation.span()[1] : citation.span()[1] + 60]
    return re.match(rf"[^;.]*?\([^)]*{re.escape(str(year))}\)", after) is not None


def _add_short_case(found: EntitySet, citation: Any, page: int) -> Entity | None:
    groups = citation.groups
    prefix = f"{groups.get('volume', '')} {citation.corrected_reporter()} "
    for entity in found.items.values():
        if entity.extra.get("type") == "case" and entity.key.startswith(prefix):
            entity.occurrences.append((page, *citation.span()))
            return entity
    return None


def _add_law(  # noqa: PLR0917
    found: EntitySet, code: str, parsed: tuple[str, str, int], page: int, start: int, citation: Any = None
) -> None:
    marker, section, end = parsed
    value = f"{_normalise_code(code)} {marker} {section}"
    entity = found.add(value, value if citation is None else citation.matched_text(), page, start, end, value)
    if not entity.extra:
        groups = citation.groups if citation is not None else {}
        entity.extra = {"type": "statute", "code": _normalise_code(code), "section": section}
        if groups.get("title") or groups.get("chapter"):
            entity.extra["title"] = groups.get("title") or groups.get("chapter")
    # The text shown is what the document says, from its first occurrence.
    first = min(entity.occurrences)
    entity.text = value if first != (page, start, end) else entity.text


def _add_missed_sections(found: EntitySet, page: Page, taken: list[tuple[int, int]]) -> None:
    """Sections eyecite does not recognise (`42 U.S.C. § 2000e`, `Mass. Gen. Laws ch. 149, § 24L`)."""
    text = page.text
    for match in re.finditer("§", text):
        at = match.start()
        if text[at - 1 : at] == "§" or any(s <= at < e for s, e in taken):
            continue
        code = _CODE_BEFORE.search(text[max(0, at - 80) : at])
        parsed = _section_after(text, at)
        if code is None or parsed is None:
            continue
        code_text = code.group(1)
        # A code name has an abbreviation or a title number; a capitalised sentence start does not.
        if "." not in code_text and not code_text[0].isdigit():
            continue
        start = at - len(code_text)
        found_entity_text = text[start : parsed[2]]
        _add_law(found, code_text, parsed, page.number, start)
        found.items[f"{_normalise_code(code_text)} {parsed[0]} {parsed[1]}"].text = found_entity_text
        taken.append((start, parsed[2]))


def _add_rule_citations(found: EntitySet, page: Page) -> None:
    for match in _ILCS.finditer(page.text):
        section = re.sub(r"\(.*$", "", match.group("section"))
        value = f"{match.group('chapter')} ILCS {section}"
        entity = found.add(value, match.group(0), page.number, *match.span(), value)
        entity.extra = entity.extra or {"type": "statute", "code": "ILCS", "section": section}
    for match in _COURT_RULE.finditer(page.text):
        value = f"Fed. R. {match.group('kind')}. P. {match.group('rule')}"
        entity = found.add(value, match.group(0), page.number, *match.span(), value)
        entity.extra = entity.extra or {"type": "court_rule", "rule": match.group("rule")}


# -- people and organisations -------------------------------------------------------------------

_LEGAL_FORM = (
    # Capitalised or in capitals: "a Delaware limited liability company" is not a name.
    r"(?:LLC|L\.L\.C|Inc|INC|Incorporated|Corp|CORP|Corporation|CORPORATION|Co|CO|Company|COMPANY|Ltd|LTD"
    r"|Limited|LIMITED|LLP|L\.L\.P|LP|L\.P|PLLC|P\.C|PC|GmbH|GMBH|AG|S\.A|N\.A|B\.V|N\.V|plc|PLC|LPA)\b\.?"
)
_BODY_SUFFIX = r"(?:Bank|BANK|Fund|FUND|Commission|Agency|Bureau|Authority)\b"
_ORG_SUFFIX = rf"(?:{_LEGAL_FORM}|{_BODY_SUFFIX})(?:,?[ ]{_LEGAL_FORM})?"
# Names never cross a line: a caption's lines are separate names.
_NAME_WORD = r"(?:[A-Z][A-Za-z'\u2019-]*\.?|[a-z][A-Z][A-Za-z]+|&)"
_ORG = re.compile(
    # No comma inside a name except before its suffix: "Karen Liu, Frost & Abernathy LLP" is two names.
    rf"(?P<name>(?:{_NAME_WORD}(?:[ ]|[ ](?:of|of the|for)[ ])){{0,7}}?{_NAME_WORD},?[ ]{_ORG_SUFFIX})"
)
_ORG_PREFIXED = re.compile(r"\b(?:Department|Office|Ministry|Bureau) of(?: the)?(?: [A-Z][a-z]+){1,4}")
_LEADING_NOISE = re.compile(
    r"^(?:(?:The|This|A|An|And|By|For|To|From|Re|Attn|Attention|Signed|Plaintiffs?|Defendants?|Landlord|"
    r"Tenants?|Customer|Supplier|Client|Bill|Billed|Lead|Counsel|Petitioner|Respondent|Dear|Cc|Matter|"
    r"Employee|Company|Bank|Our|Your|Their|Its|Upon|Under|With|Of|Between|Against|See|Via|Notice|"
    r"Insurer|Payment|Remit|Accordingly|Whether|If|When|Although|Because|Since|Unless|While|After|"
    r"Before|As|Thus|Then|Here|There|Where|Limited|Inc|LLC|Co|(?i:In[ ]re))\b[:,]?\s+)+"
)
# "Chief Technology Officer of Northpoint Software, Inc.": the role is not part of the name.
_ROLE_OF = re.compile(
    r"^.*\b(?:Officer|Director|President|Counsel|Manager|Partner|Member|Trustee|Engineer|Executive)\b"
    r",?[ ](?:(?:of|at|for)[ ])?"
)
_TITLED_PERSON_OF = re.compile(r"^(?:Mr|Mrs|Ms|Dr|Prof)\.?[ ](?:[A-Z][a-z]+[ ]){1,3}of[ ](?=[A-Z])")
# Words that make a capitalised phrase a business rather than a person ("Redwood Mutual").
_ORG_WORDS = frozenset(
    [
        "Mutual",
        "Insurance",
        "Energy",
        "Software",
        "Partners",
        "Holdings",
        "Group",
        "Capital",
        "Services",
        "Systems",
        "Labs",
        "Bank",
        "Realty",
        "Properties",
        "Development",
        "Foods",
        "Logistics",
        "Staffing",
        "Solutions",
        "Credit",
        "Analytics",
        "Biotech",
        "Pharmaceuticals",
        "Roofing",
        "Distribution",
        "Airlines",
        "Trust",
        "Fund",
        "Associates",
        "Consulting",
        "Technologies",
        "Industries",
        "Media",
    ]
)

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
    re.compile(rf"\b{_TITLE}[ ]+{_PERSON_NAME}"),
    re.compile(rf"\b(?:the[ ])?(?:Honorable|Hon\.)[ ]+{_PERSON_NAME}"),
    re.compile(
        r"\b(?:Plaintiffs?|Defendants?|Petitioner|Respondent|Employee|Decedent|Affiant|Declarant)[ ]+"
        rf"{_PERSON_NAME}(?=[\s,.;)])"
    ),
    re.compile(rf"(?:^|\n)[ \t]*(?:By:?[ ]*)?/s/[ ]*{_PERSON_NAME}(?=[ ]*(?:,|\n|$))"),
    re.compile(rf"(?:^|\n)[ \t]*By:[ ]*(?:/s/[ ]*)?{_PERSON_NAME}(?=[ ]*(?:,|\n|$))"),
    re.compile(rf"\bI,[ ]{_PERSON_NAME},[ ](?:being|declare|hereby|state|certify|the undersigned)"),
    re.compile(rf"\bappeared[ ]{_PERSON_NAME},"),
    re.compile(
        rf"(?:^|\n)[ \t]*{_HEADER_FIELDS}[ ]*:[ ]*(?:(?:Mr|Ms|Mrs|Dr)\.[ ])?{_PERSON_NAME}"
        rf"(?:[ ]and[ ]{_SECOND_NAME})?(?=[ ]*(?:<|,|\n|\(|$|;))"
    ),
    re.compile(
        rf"\b{_PERSON_NAME},[ ](?:(?:the|our|its|an?)[ ])?(?:[A-Z][a-z]+[ ]){{0,3}}"
        r"(?i:Member|Director|Officer|Counsel|Partner|President|Manager|Trustee|Secretary|Treasurer|"
        r"Associate|Engineer|Chief Executive|Head of [A-Z][a-z]+|"
        rf"field service manager)\b"
    ),
    re.compile(
        rf"\b(?i:officer|counsel|director|president|founder|partner|manager|engineer|associate|son|daughter|wife|"
        rf"husband|expert|witness|agent|attorney|trustee),[ ]{_PERSON_NAME}(?=,|[ ]\(|;)"
    ),
    re.compile(rf"\b{_PERSON_NAME}[ ]\((?:trustee|her son|his son|her daughter|his daughter|associate)"),
    re.compile(
        rf"\b{_PERSON_NAME}[ ]\((?:the[ ])?[\"\u201c]"
        r"(?:Employee|Decedent|Executive|Consultant|Guarantor|Buyer|Seller|Borrower|Lender)"
    ),
    re.compile(rf"\b{_PERSON_NAME}(?=,[ ](?:born|aged|deceased|a minor)\b)"),
    re.compile(rf"\((?P<person>{_GIVEN}(?:[ ]{_GIVEN}){{1,3}})\)"),
    re.compile(
        rf"(?:^|\n)[ \t]*{_PERSON_NAME}[ \t]*\n[ \t]*"
        r"(?:Partner|Chief Executive|Managing Director|Counsel|Director|"
        rf"United States|District Judge|Judge|Magistrate|Notary)"
    ),
    re.compile(
        rf"(?:^|\n)[ \t]*{_CAPS_NAME}[ \t]*\n[ \t]*"
        r"(?:United States|Chief|Circuit|District|Magistrate|Judge|Justice)"
    ),
    re.compile(
        rf"(?:^|\n)[ \t]*{_CAPS_NAME},[ ](?:individually|Plaintiffs?|Defendants?|Petitioner|Respondent)"
    ),
    re.compile(rf"\b(?:of|and)[ ]{_CAPS_NAME}(?:[ ]and|,)[ ][A-Z]"),
    re.compile(rf"(?:^|\n)[ \t]*{_CAPS_NAME}[ ]and[ ][A-Z]"),
    re.compile(rf"\b\d{{2}}/\d{{2}}/\d{{4}}[ ]+{_PERSON_NAME}(?=[ ][ ])"),
    re.compile(rf"(?:LLP|LLC|P\.C\.|PLLC)[ \t]*\n[ \t]*{_PERSON_NAME}[ \t]*(?=\n|$)"),
]
_CLOSING = re.compile(
    r"(?:Sincerely|Very truly yours|Yours sincerely|Yours faithfully|Best regards|Kind regards|Regards|Best|"
    r"Respectfully submitted|Respectfully|Thank you)[,.]?[ \t]*\n(?:[ \t]*\n)*[ \t]*"
    + _PERSON_NAME
    + r"[ \t]*(?=\n|$)"
)
_SIGNATURE_BEFORE_OATH = re.compile(
    r"(?:^|\n)[ \t]*" + _PERSON_NAME + r"[ \t]*\n(?:[ \t]*\n)?[ \t]*(?:Sworn|Executed|Subscribed)"
)
_NOT_NAME_WORDS = frozenset(
    [
        "The",
        "This",
        "That",
        "Court",
        "Clerk",
        "Office",
        "Team",
        "Help",
        "Desk",
        "Litigation",
        "United",
        "States",
        "District",
        "Judge",
        "Plaintiff",
        "Defendant",
        "Company",
        "Agreement",
        "Lease",
        "Order",
        "Notice",
        "Dated",
        "Date",
        "Re",
        "Subject",
        "Attorney",
        "Attorneys",
        "Counsel",
        "Respectfully",
        "Sincerely",
        "Regards",
        "Payment",
        "Total",
        "Subtotal",
        "Invoice",
        "Matter",
        "Case",
        "Exhibit",
        "Section",
        "Article",
        "Rule",
        "Act",
        "Code",
        "State",
        "County",
        "Motion",
        "Memorandum",
        "Declaration",
        "Affidavit",
        "Complaint",
        "Answer",
        "Client",
        "Tenant",
        "Landlord",
        "Customer",
        "Supplier",
        "Employee",
        "Trustee",
        "Notary",
        "Public",
        "Your",
        "Our",
        "Dear",
        "Thank",
        "Kind",
        "Best",
        "Sworn",
        "Executed",
        "Signed",
        "Agreed",
        "Very",
        "Yours",
        "Of",
        "And",
        "In",
        "On",
        "At",
        "For",
        "By",
        "To",
        "From",
        "Email",
        "Ecf",
        "Do",
        "Please",
        "Per",
        "Upon",
        "Premises",
        "Term",
        "Rent",
        "Default",
        "Recitals",
        "Release",
        "Fees",
        "Scope",
        "Staffing",
        "Background",
        "Discussion",
        "Question",
    ]
)
_CAPTION = re.compile(
    rf"\b(?P<left>{_NAME_WORD}(?:[ ]{_NAME_WORD}){{0,5}}(?:,?[ ]{_ORG_SUFFIX})?)[ ]v\.[ ]"
    rf"(?P<right>{_NAME_WORD}(?:[ ]{_NAME_WORD}){{0,5}}(?:,?[ ]{_ORG_SUFFIX})?)"
)


def _overlaps(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    return any(start < e and s < end for s, e in spans)


def _clean_org(raw: str, start: int) -> tuple[str, int] | None:
    for prefix in (_TITLED_PERSON_OF, _ROLE_OF, _LEADING_NOISE):
        noise = prefix.match(raw)
        if noise:
            raw, start = raw[noise.end() :], start + noise.end()
    raw = raw.rstrip(",")
    words = [w for w in re.split(r"[\s,]+", raw) if w]
    if len(words) < 2 or not words[0][:1].isupper() or "Court" in words:
        return None  # courts are not listed (docs/decisions/0007)
    return raw, start


def org_key(name: str) -> str:
    """Deduplication key: case, punctuation and a leading "The" do not make a new organisation."""
    key = re.sub(r"[^\w&]+", " ", name.casefold()).strip()
    return re.sub(r"^the ", "", key)


def _title_case(name: str) -> str:
    return " ".join(w if len(w) <= 2 and w.endswith(".") else w.capitalize() for w in name.split())


def _organizations(pages: list[Page], excluded: dict[int, list[tuple[int, int]]]) -> EntitySet:
    found = EntitySet()
    display: dict[str, str] = {}
    for page in pages:
        spans = excluded.get(page.number, [])
        for pattern in (_ORG, _ORG_PREFIXED):
            for match in pattern.finditer(page.text):
                cleaned = _clean_org(match.group(0), match.start())
                if cleaned is None or _overlaps(spans, match.start(), match.end()):
                    continue
                name, start = cleaned
                key = org_key(name)
                found.add(key, name, page.number, start, start + len(name), None)
                # Prefer the form in mixed case over a caption in capitals.
                if key not in display or (display[key].isupper() and not name.isupper()):
                    display[key] = name
    for key, entity in found.items.items():
        entity.text = display[key]
    return found


_ORG_AFTER = re.compile(rf",?[ ]{_ORG_SUFFIX}")


def _valid_person(name: str) -> bool:
    words = name.split()
    if not words or any(w.strip(".,") in _NOT_NAME_WORDS or w in _ORG_WORDS for w in words):
        return False
    return not all(len(w.rstrip(".")) == 1 for w in words)


def _person_mentions(
    pages: list[Page], excluded: dict[int, list[tuple[int, int]]]
) -> Iterator[tuple[str, int, int, int]]:
    for page in pages:
        spans = excluded.get(page.number, [])
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
                    if _valid_person(name) and not _overlaps(spans, start, end):
                        yield name, page.number, start, end


def _caption_parties(
    pages: list[Page], excluded: dict[int, list[tuple[int, int]]]
) -> Iterator[tuple[str, int, int, int, bool]]:
    """Parties of "X v. Y" captions of this matter: (name, page, start, end, is_organisation)."""
    for page in pages:
        spans = excluded.get(page.number, [])
        for match in _CAPTION.finditer(page.text):
            if _overlaps(spans, match.start(), match.end()):
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


def _people(pages: list[Page], excluded: dict[int, list[tuple[int, int]]], org_names: set[str]) -> EntitySet:
    mentions = list(_person_mentions(pages, excluded))
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


def _names(
    pages: list[Page], excluded: dict[int, list[tuple[int, int]]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    organizations = _organizations(pages, excluded)
    people = _people(pages, excluded, set(organizations.items))
    _add_more_occurrences(pages, people)
    _add_more_occurrences(pages, organizations)
    return people.as_list(), organizations.as_list()
