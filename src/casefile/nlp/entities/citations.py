"""Legal citations: cases (eyecite), statutes (eyecite, citeurl for the federal codes it knows in
every way they are written, and rules for what both miss) and court rules (court_rules.py), and
the spans of cited cases' names."""

from __future__ import annotations

import logging
import re
from functools import lru_cache
from typing import Any

from ..types import Page
from .base import Entity, EntitySet, Spans, SpansByPage
from .court_rules import add_rule_citations

logging.getLogger("eyecite").setLevel(logging.ERROR)  # it warns about every ambiguous overlap


@lru_cache(maxsize=1)
def _eyecite() -> Any:
    import eyecite

    eyecite.get_citations("See 347 U.S. 483 (1954).")  # builds its tokenizer once (~0.1 s)
    return eyecite


@lru_cache(maxsize=1)
def _citator() -> Any:
    """citeurl (MIT, its templates ship inside the package): federal statutes written out
    ("section 501 of Title 17 of the United States Code", "I.R.C. sec. 465", "42 USC 1983")."""
    from citeurl import Citator

    # Only the templates used here (_CITEURL_CODES): running all 144 cost more than eyecite.
    everything = Citator(defaults=["general federal law", "specific federal laws"])
    return Citator(defaults=None, templates={name: everything.templates[name] for name in _CITEURL_CODES})


def warm_up() -> None:
    _eyecite()
    _citator()


_SECTION = re.compile(r"§§?\s*(?P<section>\d[\dA-Za-z.\-]*)")
# What may name a code right before "§": "42 U.S.C.", "Cal. Civ. Code", "Mass. Gen. Laws ch. 149,".
_CODE_BEFORE = re.compile(r"((?:\d+\s+)?(?:(?:[A-Z][A-Za-z.&]*|&|ch\.\s\d+[A-Z]?,)\s+){1,7})$")
# "Id. § 7303-4.6": a section of the code cited just before.
_ID_BEFORE = re.compile(r"\b[Ii]d\.,?\s*$")
# A code named by an abbreviation in capitals, without periods: "CPLR § 3211".
_CAPITALS_CODE = re.compile(r"^[A-Z]{3,}\s+$")
# A "reporter citation" that is a street address: "1935 NW 87 Avenue".
_STREET_AFTER = re.compile(
    r"\s*(?:Avenue|Ave\.?|Street|St\.|Road|Rd\.|Boulevard|Blvd\.?|Drive|Lane|Way|Parkway|Place|Suite|Court|Ct\.)\b"
)
# The federal codes taken from citeurl, and how their citations are written here.
_CITEURL_CODES = {
    "U.S. Code": "{title} U.S.C. § {section}",
    "Code of Federal Regulations": "{title} C.F.R. § {section}",
    "Internal Revenue Code": "I.R.C. § {section}",
}
_NAMED_LAW = re.compile(r"(?:[A-Z][a-z]+\s+){1,3}(?:Law|Laws|Code|Act)\s+$")


def _section_after(text: str, position: int) -> tuple[str, str, int] | None:
    """The section number following the `§` at or after `position`: (marker, section, end)."""
    match = _SECTION.match(text, position)
    if match is None:
        return None
    section = match.group("section").rstrip(".-")
    end = match.start("section") + len(section)
    section = _first_of_range(section, text.startswith("§§", position))
    # Each section of a list is its own citation (`§§ 1155, 5107(b)` cites § 1155 and § 5107).
    return "§", section, end


# A range of sections "4.1-4.10" (but "2000e-2" is one section: its parts differ in shape), and
# after "§§" a range of whole numbers ("§§ 2510-2521", "§§ 2201-02").
_RANGE = re.compile(r"^(\d+\.\d+)-\d+\.\d+$")
_NUMBER_RANGE = re.compile(r"^(\d+)-\d+$")


def _first_of_range(section: str, several: bool) -> str:
    """A range is cited by its first section."""
    section = _RANGE.sub(r"\1", section)
    return _NUMBER_RANGE.sub(r"\1", section) if several else section


# The further sections of a list after the first: ", 5107(b)", ", 4.1-4.10", "; and 4.16" is not.
_MORE_SECTIONS = re.compile(r"(?:\([\w.]+\))*,[ ]+(?:and[ ]+)?(?P<section>\d[\dA-Za-z.\-]*[\dA-Za-z])")


def _list_sections(text: str, end: int) -> list[tuple[str, int, int]]:
    """(section, start, end) of the sections listed after a `§§` citation's first one."""
    out = []
    while (match := _MORE_SECTIONS.match(text, end)) is not None:
        section = _first_of_range(match.group("section"), True)
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


def _squeezed(text: str) -> tuple[str, list[int]]:
    """The text with every run of whitespace made one space (eyecite finds nothing in "789 P.2d
    \n631", a citation broken across lines after a space), and for each of its characters (and
    its end) the offset in `text`."""
    parts: list[str] = []
    where: list[int] = []
    for match in re.finditer(r"\s+|\S+", text):
        if match.group(0)[0].isspace():
            parts.append(" ")
            where.append(match.start())
        else:
            parts.append(match.group(0))
            where.extend(range(match.start(), match.end()))
    where.append(len(text))
    return "".join(parts), where


def _page_citations(page: Page, found: EntitySet) -> Spans:
    text = page.text
    squeezed, where = _squeezed(text)

    def span(citation: Any) -> tuple[int, int]:
        start, end = citation.span()
        return where[start], where[end - 1] + 1

    taken: Spans = []
    excluded: Spans = []
    last_case: Entity | None = None
    for citation in _eyecite().get_citations(squeezed):
        kind = type(citation).__name__
        start, end = span(citation)
        if kind == "FullCaseCitation":
            if _STREET_AFTER.match(squeezed, citation.span()[1]):
                continue  # an address, not a reporter
            last_case = _add_case(found, citation, page.number, (start, end))
            excluded.append((where[_case_name_start(squeezed, citation)], end))
        elif kind == "ShortCaseCitation":
            last_case = _add_short_case(found, citation, page.number, (start, end)) or last_case
        elif kind == "IdCitation" and last_case is not None:
            last_case.occurrences.append((page.number, start, end))
        elif kind == "FullLawCitation" and "§" in citation.matched_text():
            at = where[citation.span()[0] + citation.matched_text().index("§")]
            parsed = _section_after(text, at)
            if parsed is not None:
                _add_law(found, text[start:at], parsed, page.number, start, citation)
                taken.append((start, parsed[2]))
                if text.startswith("§§", at):
                    taken.append(_add_listed(found, text[start:at], text, parsed[2], page.number))
    _add_missed_sections(found, page, taken)
    _add_citeurl_statutes(found, page, squeezed, where, taken)
    add_rule_citations(found, page)
    return excluded


def _add_citeurl_statutes(
    found: EntitySet, page: Page, squeezed: str, where: list[int], taken: Spans
) -> None:
    """Federal statutes citeurl reads and the rules above did not: written with "Section", "sec."
    or in words, or "USC" without periods. Only full citations: citeurl's short forms ("Section
    1983" alone) guess their title from the citation before, which is often another code."""
    for cite in _citator().list_cites(squeezed):
        form = _CITEURL_CODES.get(cite.template.name)
        tokens = cite.tokens
        if form is None or cite.parent is not None or not tokens.get("section"):
            continue
        start, end = where[cite.span[0]], where[cite.span[1] - 1] + 1
        if any(start < e and s < end for s, e in taken):
            continue
        section = _first_of_range(str(tokens["section"]), "-" in str(tokens["section"]) and "§§" in cite.text)
        value = form.format(title=tokens.get("title") or "", section=section)
        entity = found.add(value, page.text[start:end], page.number, start, end, value)
        entity.extra = entity.extra or {
            "type": "statute",
            "code": value.split(" § ")[0],
            "section": section,
            **({"title": tokens["title"]} if tokens.get("title") else {}),
        }
        taken.append((start, end))


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


def _add_case(found: EntitySet, citation: Any, page: int, span: tuple[int, int]) -> Entity:
    groups = citation.groups
    value = f"{groups.get('volume', '')} {citation.corrected_reporter()} {groups.get('page', '')}".strip()
    start, end = span
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


def _add_short_case(found: EntitySet, citation: Any, page: int, span: tuple[int, int]) -> Entity | None:
    groups = citation.groups
    prefix = f"{groups.get('volume', '')} {citation.corrected_reporter()} "
    for entity in found.items.values():
        if entity.extra.get("type") == "case" and entity.key.startswith(prefix):
            entity.occurrences.append((page, *span))
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
        before = text[max(0, at - 80) : at]
        parsed = _section_after(text, at)
        if parsed is None:
            continue
        if _ID_BEFORE.search(before):
            _add_id_section(found, page.number, at, parsed)
            continue
        code = _CODE_BEFORE.search(before)
        if code is None:
            continue
        code_text = code.group(1)
        # A code name has an abbreviation or a title number; a capitalised sentence start does not.
        # A state law cited by its name keeps the name: "Judiciary Law § 431", "Penal Law\n§ 65.10".
        named = _NAMED_LAW.search(code_text)
        if named:
            code_text = named.group(0)
        elif "." not in code_text and not code_text[0].isdigit() and not _CAPITALS_CODE.match(code_text):
            continue
        start = at - len(code_text)
        found_entity_text = text[start : parsed[2]]
        _add_law(found, code_text, parsed, page.number, start)
        found.items[f"{_normalise_code(code_text)} {parsed[0]} {parsed[1]}"].text = found_entity_text
        taken.append((start, parsed[2]))
        if text.startswith("§§", at):
            taken.append(_add_listed(found, code_text, text, parsed[2], page.number))


def _add_id_section(found: EntitySet, page: int, at: int, parsed: tuple[str, str, int]) -> None:
    """ "Id. § 7303-4.6": the same code as the statute cited last before it on the page."""
    before = [
        (max(o[2] for o in e.occurrences if o[0] == page and o[2] <= at), e)
        for e in found.items.values()
        if e.extra.get("type") == "statute" and any(o[0] == page and o[2] <= at for o in e.occurrences)
    ]
    if before:
        code = max(before, key=lambda item: item[0])[1].extra["code"]
        _add_law(found, code, parsed, page, at)
