"""Citations eyecite does not know, found by their written conventions: court rules (federal,
circuit, local and state rules by number), state codes cited without `§` (`KRS 117.235`,
`820 ILCS 105/4a`) and neutral citations of the courts of England and Wales (`[2022] EWHC 1369 (Ch)`).
Values follow the reporters' short forms (`5th Cir. R. 47.5`, `Fed. R. App. P. 28`)."""

from __future__ import annotations

import re

from ..types import Page
from .base import EntitySet, Spans

_ILCS = re.compile(r"\b(?P<chapter>\d+)\s+ILCS\s+(?P<section>\d+/[\dA-Za-z.\-]*[\dA-Za-z])")
# State codes cited without "§": "KRS 117.235", "RCW 4.16.080", "ORS 12.110", "NRS 11.190".
_STATE_CODE = re.compile(
    r"\b(?P<code>KRS|RCW|ORS|NRS|MCL|HRS|RSA|A\.R\.S\.|N\.J\.S\.A\.|O\.C\.G\.A\.)\s+(?:§\s*)?"
    r"(?P<section>\d+[A-Z]?(?:[.:-]\d+[A-Za-z]?)+)"
)
# The circuits named in words ("Sixth Circuit Rule 206"), written as the reporters write them.
_CIRCUIT_WORDS = {
    "First": "1st",
    "Second": "2d",
    "Third": "3d",
    "Fourth": "4th",
    "Fifth": "5th",
    "Sixth": "6th",
    "Seventh": "7th",
    "Eighth": "8th",
    "Ninth": "9th",
    "Tenth": "10th",
    "Eleventh": "11th",
    "Federal": "Fed.",
    "Fed.": "Fed.",
}
# Circuit rules: "5th Circuit Rule 47.5", "3d Cir. L.A.R. 113", "3rd Circuit LAR Misc. 107.2",
# "Federal Circuit Rule 47.3", "Sixth Circuit Rule 206"; written in the short form ("6th Cir. R. 206").
_CIRCUIT_NAMES = "|".join(re.escape(word) for word in _CIRCUIT_WORDS)
_CIRCUIT_RULE = re.compile(
    rf"\b(?P<circuit>\d+(?:st|nd|rd|th|d)|{_CIRCUIT_NAMES})\s+Cir(?:cuit|\.)\s+"
    r"(?P<kind>Rule|R\.|L\.\s?A\.\s?R\.|LAR)\s+(?P<misc>Misc\.\s+)?(?P<rule>\d+(?:\.\d+)?)"
)
# A rule cited by number alone, with the kind of rules before it where the text names it: a state
# court rule "Rule 24.035", a district court's "Local Rule 56.1" or "CIVIL LOCAL RULE 6.2".
_BARE_RULE = re.compile(
    r"\b(?P<kind>(?:(?i:civil|criminal|bankruptcy|local)\s+){0,2})(?i:rule)\s+(?P<rule>\d+\.\d+)"
)
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
# "Fed. R. Civ. P. 56", and the "P." sometimes left out ("Fed. R. App. 32.1").
_COURT_RULE = re.compile(
    r"\bFed\.\s?R\.\s?(?P<kind>Civ|Crim|App|Evid|Bankr)\.\s?(?:P\.\s?)?(?P<rule>\d+(?:\.\d+)?)"
)
# Neutral citations of the UK courts: "[2022] EWHC 1369 (Ch)", "[2019] UKSC 5", "[2021] EWCA Civ 12".
_NEUTRAL = re.compile(
    r"\[(?P<year>\d{4})\]\s(?P<court>UKSC|UKPC|UKHL|EWCA\s(?:Civ|Crim)|EWHC|EWFC|EWCOP|UKUT|UKFTT|UKEAT)"
    r"\s(?P<number>\d+)(?:\s\((?P<division>[A-Z][A-Za-z]{1,6})\))?"
)


def _federal_rule(kind: str, rule: str) -> str:
    return f"Fed. R. Evid. {rule}" if kind == "Evid" else f"Fed. R. {kind}. P. {rule}"


def add_rule_citations(found: EntitySet, page: Page) -> None:
    """Court rules, state codes without `§` and neutral citations on `page`."""
    text = page.text
    for match in _STATE_CODE.finditer(text):
        if "§" in match.group(0):
            continue  # found with the other sections
        value = f"{match.group('code')} {match.group('section')}"
        entity = found.add(value, match.group(0), page.number, *match.span(), value)
        entity.extra = entity.extra or {
            "type": "statute",
            "code": match.group("code"),
            "section": match.group("section"),
        }
    for match in _ILCS.finditer(text):
        section = re.sub(r"\(.*$", "", match.group("section"))
        value = f"{match.group('chapter')} ILCS {section}"
        entity = found.add(value, match.group(0), page.number, *match.span(), value)
        entity.extra = entity.extra or {"type": "statute", "code": "ILCS", "section": section}
    for match in _NEUTRAL.finditer(text):
        value = " ".join(match.group(0).split())
        entity = found.add(value, match.group(0), page.number, *match.span(), value)
        entity.extra = entity.extra or {"type": "case", "year": match.group("year")}
    for pattern, kinds in ((_COURT_RULE, None), (_FEDERAL_RULE_WORDS, _FEDERAL_KINDS)):
        for match in pattern.finditer(text):
            kind = kinds[match.group("kind")] if kinds else match.group("kind")
            value = _federal_rule(kind, match.group("rule"))
            entity = found.add(value, match.group(0), page.number, *match.span(), value)
            entity.extra = entity.extra or {"type": "court_rule", "rule": match.group("rule")}
    taken: Spans = []
    for match in _CIRCUIT_RULE.finditer(text):
        written = match.group("circuit")
        circuit = _CIRCUIT_WORDS.get(written) or re.sub(r"(?<=\d)(?:nd|rd)$", "d", written)
        kind = "R." if match.group("kind") in {"Rule", "R."} else "L.A.R."
        misc = "Misc. " if match.group("misc") else ""
        value = f"{circuit} Cir. {kind} {misc}{match.group('rule')}"
        entity = found.add(value, match.group(0), page.number, *match.span(), value)
        entity.extra = entity.extra or {"type": "court_rule", "rule": match.group("rule")}
        taken.append(match.span())
    for match in _BARE_RULE.finditer(text):
        if any(s <= match.start() < e for s, e in taken):
            continue
        kind = " ".join(word.capitalize() for word in match.group("kind").split())
        value = f"{kind} Rule {match.group('rule')}".strip()
        entity = found.add(value, match.group(0), page.number, *match.span(), value)
        entity.extra = entity.extra or {"type": "court_rule", "rule": match.group("rule")}
