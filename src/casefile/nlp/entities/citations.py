"""Legal citations: cases (eyecite), statutes and court rules, and the spans of cited cases' names."""

from __future__ import annotations

import logging
import re
from functools import lru_cache
from typing import Any

from ..types import Page
from .base import Entity, EntitySet, Spans, SpansByPage

logging.getLogger("eyecite").setLevel(logging.ERROR)  # it warns about every ambiguous overlap


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
# State codes cited without "§": "KRS 117.235", "RCW 4.16.080", "ORS 12.110", "NRS 11.190".
_STATE_CODE = re.compile(
    r"\b(?P<code>KRS|RCW|ORS|NRS|MCL|HRS|RSA|A\.R\.S\.|N\.J\.S\.A\.|O\.C\.G\.A\.)\s+(?:§\s*)?"
    r"(?P<section>\d+[A-Z]?(?:[.:-]\d+[A-Za-z]?)+)"
)
_NAMED_LAW = re.compile(r"(?:[A-Z][a-z]+\s+){1,3}(?:Law|Laws|Code|Act)\s+$")
# Circuit rules: "5th Circuit Rule 47.5", "3d Cir. L.A.R. 113", "3rd Circuit LAR Misc. 107.2",
# "Federal Circuit Rule 47.3"; written in the reporters' short form ("5th Cir. R. 47.5").
_CIRCUIT_RULE = re.compile(
    r"\b(?P<circuit>\d+(?:st|nd|rd|th|d)|Federal|Fed\.)\s+Cir(?:cuit|\.)\s+"
    r"(?P<kind>Rule|R\.|L\.\s?A\.\s?R\.|LAR)\s+(?P<misc>Misc\.\s+)?(?P<rule>\d+(?:\.\d+)?)"
)
# A state court rule cited by number alone: "Rule 24.035", "Rule 29.12(c)".
_BARE_RULE = re.compile(r"\bRule\s+(?P<rule>\d+\.\d+)")
# The federal rules written out: "Federal Rule of Appellate Procedure 28(j)".
_FEDERAL_RULE_WORDS = re.compile(
    r"\bFederal\s+Rules?\s+of\s+(?P<kind>Civil|Criminal|Appellate|Evidence|Bankruptcy)\s+(?:Procedure\s+)?"
    r"(?P<rule>\d+(?:\.\d+)?)"
)
_FEDERAL_KINDS = {
    "Civil": "Civ",
    "Criminal": "Crim",
    "Appellate": "App",
    "Evidence": "Evid",
    "Bankruptcy": "Bankr",
}
_COURT_RULE = re.compile(
    r"\bFed\.\s?R\.\s?(?P<kind>Civ|Crim|App|Evid|Bankr)\.\s?P\.\s?(?P<rule>\d+(?:\.\d+)?)"
)


def _section_after(text: str, position: int) -> tuple[str, str, int] | None:
    """The section number following the `§` at or after `position`: (marker, section, end)."""
    match = _SECTION.match(text, position)
    if match is None:
        return None
    section = match.group("section").rstrip(".-")
    end = match.start("section") + len(section)
    section = _RANGE.sub(r"\1", section)  # "§§ 4.1-4.10" is cited by its first section
    # Each section of a list is its own citation (`§§ 1155, 5107(b)` cites § 1155 and § 5107).
    return "§", section, end


# A range of sections "4.1-4.10" (but "2000e-2" is one section: its parts differ in shape).
_RANGE = re.compile(r"^(\d+\.\d+)-\d+\.\d+$")
# The further sections of a list after the first: ", 5107(b)", ", 4.1-4.10", "; and 4.16" is not.
_MORE_SECTIONS = re.compile(r"(?:\([\w.]+\))*,[ ]+(?:and[ ]+)?(?P<section>\d[\dA-Za-z.\-]*[\dA-Za-z])")


def _list_sections(text: str, end: int) -> list[tuple[str, int, int]]:
    """(section, start, end) of the sections listed after a `§§` citation's first one."""
    out = []
    while (match := _MORE_SECTIONS.match(text, end)) is not None:
        section = _RANGE.sub(r"\1", match.group("section"))
        out.append((section, match.start("section"), match.end("section")))
        end = match.end()
    return out


def _normalise_code(code: str) -> str:
    return re.sub(r"\s+", " ", code).strip()


def find_citations(pages: list[Page]) -> tuple[list[dict[str, Any]], SpansByPage]:
    """Citations, and per page the spans of cited cases' names (not the document's own parties)."""
    found = EntitySet()
    cited_parties: SpansByPage = {}
    for page in pages:
        # eyecite refuses an empty text, and a PDF's scanned or blank page has none.
        cited_parties[page.number] = _page_citations(page, found) if page.text.strip() else []
    return found.as_list(), cited_parties


def _page_citations(page: Page, found: EntitySet) -> Spans:
    eyecite = _eyecite()
    text = page.text
    taken: Spans = []
    excluded: Spans = []
    last_case: Entity | None = None
    # Line breaks become spaces (same length, same offsets): a citation broken across lines
    # ("241 AD3d\n1126") is found whole.
    for citation in eyecite.get_citations(text.replace("\n", " ")):
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
                if text.startswith("§§", at):
                    taken.append(_add_listed(found, text[start:at], text, parsed[2], page.number))
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


def _add_listed(found: EntitySet, code: str, text: str, end: int, page: int) -> tuple[int, int]:
    """The further sections of a `§§` list, each its own citation; the span they cover."""
    last = end
    for section, start, stop in _list_sections(text, end):
        _add_law(found, code, ("§", section, stop), page, start)
        last = stop
    return end, last


def _add_missed_sections(found: EntitySet, page: Page, taken: Spans) -> None:
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
        # A state law cited by its name keeps the name: "Judiciary Law § 431", "Penal Law\n§ 65.10".
        named = _NAMED_LAW.search(code_text)
        if named:
            code_text = named.group(0)
        elif "." not in code_text and not code_text[0].isdigit():
            continue
        start = at - len(code_text)
        found_entity_text = text[start : parsed[2]]
        _add_law(found, code_text, parsed, page.number, start)
        found.items[f"{_normalise_code(code_text)} {parsed[0]} {parsed[1]}"].text = found_entity_text
        taken.append((start, parsed[2]))
        if text.startswith("§§", at):
            taken.append(_add_listed(found, code_text, text, parsed[2], page.number))


def _add_rule_citations(found: EntitySet, page: Page) -> None:
    for match in _STATE_CODE.finditer(page.text):
        if "§" in match.group(0):
            continue  # found with the other sections
        value = f"{match.group('code')} {match.group('section')}"
        entity = found.add(value, match.group(0), page.number, *match.span(), value)
        entity.extra = entity.extra or {
            "type": "statute",
            "code": match.group("code"),
            "section": match.group("section"),
        }
    for match in _ILCS.finditer(page.text):
        section = re.sub(r"\(.*$", "", match.group("section"))
        value = f"{match.group('chapter')} ILCS {section}"
        entity = found.add(value, match.group(0), page.number, *match.span(), value)
        entity.extra = entity.extra or {"type": "statute", "code": "ILCS", "section": section}
    for match in _COURT_RULE.finditer(page.text):
        value = f"Fed. R. {match.group('kind')}. P. {match.group('rule')}"
        entity = found.add(value, match.group(0), page.number, *match.span(), value)
        entity.extra = entity.extra or {"type": "court_rule", "rule": match.group("rule")}
    for match in _FEDERAL_RULE_WORDS.finditer(page.text):
        kind = _FEDERAL_KINDS[match.group("kind")]
        value = (
            f"Fed. R. {kind}. P. {match.group('rule')}"
            if kind != "Evid"
            else f"Fed. R. Evid. {match.group('rule')}"
        )
        entity = found.add(value, match.group(0), page.number, *match.span(), value)
        entity.extra = entity.extra or {"type": "court_rule", "rule": match.group("rule")}
    taken: Spans = []
    for match in _CIRCUIT_RULE.finditer(page.text):
        circuit = {"Federal": "Fed.", "Fed.": "Fed."}.get(match.group("circuit"))
        circuit = circuit or re.sub(r"(?<=\d)(?:nd|rd)$", "d", match.group("circuit"))
        kind = "R." if match.group("kind") in {"Rule", "R."} else "L.A.R."
        misc = "Misc. " if match.group("misc") else ""
        value = f"{circuit} Cir. {kind} {misc}{match.group('rule')}"
        entity = found.add(value, match.group(0), page.number, *match.span(), value)
        entity.extra = entity.extra or {"type": "court_rule", "rule": match.group("rule")}
        taken.append(match.span())
    for match in _BARE_RULE.finditer(page.text):
        if any(s <= match.start() < e for s, e in taken):
            continue
        value = f"Rule {match.group('rule')}"
        entity = found.add(value, match.group(0), page.number, *match.span(), value)
        entity.extra = entity.extra or {"type": "court_rule", "rule": match.group("rule")}
