"""Marks of a legal document's kind that do not depend on its topic: the layout and formulas each
genre is written in (an opinion's panel and disposition, a motion's title, a letter's salutation,
an e-mail's header lines). The nearest-centroid score (classify.py) places documents by what they
are about as much as by what they are; these cues add the genre. Each pattern is a convention of
US legal writing, not a phrase of a particular document; a label's score is the number of its
distinct cues present, capped, so one repeated word cannot dominate.
"""

from __future__ import annotations

import re

_CUES: dict[str, list[str]] = {
    "court_order": [
        r"\bBefore:?\s+[^.;]{1,200}?\bJudges?\b",  # an appellate panel
        r"(?i:\bper\s+curiam\b)",
        r"\bIT\s+IS\s+(?:HEREBY\s+|FURTHER\s+|SO\s+)?ORDERED\b|\bORDERED\s+that\b|\bSO\s+ORDERED\b",
        r"(?m)^\s*(?:O\s?R\s?D\s?E\s?R|OPINION|MEMORANDUM\s+(?:OPINION|AND\s+ORDER)|JUDGMENT|DECISION(?:\s+AND\s+ORDER)?)"
        r"\s*(?:$|GRANTING|DENYING|ON\b)",
        r"\bdelivered\s+the\s+opinion\b|\bopinion\s+of\s+the\s+court\b",
        r"\b(?:we|We)\s+(?:affirm|reverse|vacate|remand)\b|\bis\s+(?:AFFIRMED|REVERSED|VACATED)\b",
        r"(?i:\bslip\s+op(?:inion)?\b)",
        r"\bBy\s+the\s+Court:",
        # A title in capitals that ends in ORDER: "TRANSFER ORDER", "EXPEDITED HEARING ORDER" (not a
        # motion's or a stipulation's title that asks for one: "MOTION FOR PROTECTIVE ORDER").
        r"(?m)^[ \t]*(?!.*\b(?:MOTION|APPLICATION|REQUEST|PETITION|STIPULAT\w*|PROPOSED|NOTICE|FOR)\b)"
        r"(?:[A-Z][A-Z'\u2019-]+[ \t]+){1,6}ORDER[ \t]*$",
        r"(?i:\border\s+(?:granting|denying))",
        # An appellate decision names the court it reviews; a brief calls it "the court below".
        r"(?:^|\n)\s*(?:On\s+)?Appeals?\s+from\s+the\s+(?:United\s+States\s+District\s+Court|Court\s+of|Superior\s+Court)",
        r"\bORDER\s+OF\s+(?:THE\s+)?COURT\b|\bORDER\s+AND\s+JUDGMENT\b|\bJUDGMENT\b(?=.{0,40}\bAFFIRMED\b)",
        r"\bOpinion\s+(?:by|for\s+the\s+court\s+filed\s+by)\s+(?:Circuit\s+|Chief\s+)?Judge\b|\bAFFIRMED\b",
    ],
    "pleading": [
        r"\bMOTION\s+(?:TO|FOR|IN)\b",
        r"(?m)^\s*(?:(?:FIRST\s+)?AMENDED\s+)?(?:COMPLAINT|ANSWER|PETITION)\b",
        r"\bWHEREFORE\b",
        r"(?i:\bcomes\s+now\b)",
        r"(?i:\bdemand\s+for\s+(?:a\s+)?jury\s+trial\b)",
        r"\b(?:Plaintiffs?|Defendants?|Petitioners?)\s+(?:hereby\s+)?(?:respectfully\s+)?(?:move|moves|allege|alleges|request)\b",
        r"(?i:\bcounsel\s+for\s+(?:plaintiffs?|defendants?|appell(?:ants?|ees?)|petitioners?)\b)",
    ],
    "correspondence": [
        r"(?m)^\s*Dear\s+[A-Z]",
        r"(?m)^\s*(?:Sincerely|Very\s+truly\s+yours|Yours\s+(?:truly|sincerely|faithfully)|Respectfully\s+yours"
        r"|Truthfully|Regards|Best\s+regards|Kind\s+regards|Cordially|Best\s+Regards\b.*),?\s*$",
        r"(?m)^\s*(?:RE|Re):\s",
        r"\bCLERK\s+OF\s+(?:THE\s+)?COURT\b|\bOFFICE\s+OF\s+THE\s+CLERK\b",
        r"\b(?:DOCKETING|CLERK'?S?)\s+NOTICE\b|\bVia\s+(?:ECF|E-?mail|Federal\s+Express|U\.S\.\s+Mail)\b",
    ],
    "contract": [
        r"\bAGREEMENT\b|\bAgreement\s+(?:is\s+)?(?:made|entered)\b",
        r"\bWHEREAS\b",
        r"\bIN\s+WITNESS\s+WHEREOF\b",
        r"(?i:\bthe\s+parties\s+(?:hereto\s+)?agree\b|\bhereby\s+agree\b|\bagree\s+as\s+follows\b)",
        r"(?i:\bmade\s+(?:and\s+entered\s+into\s+)?as\s+of\b)",
    ],
    "email": [
        r"(?m)^\s*From:\s.*(?:@|<)",
        r"(?m)^\s*(?:Sent|Date):\s.*\d",
        r"(?m)^\s*Subject:\s",
        r"(?m)^\s*To:\s.*@",
    ],
    "memo": [
        r"(?m)^\s*MEMO(?:RANDUM)?(?:\s+TO\s+FILE)?\s*$",
        r"(?m)^\s*(?:TO|To):\s.*\n\s*(?:FROM|From):\s",
        r"(?i:\bquestion\s+presented\b|\bshort\s+answer\b)",
    ],
    "affidavit": [
        r"(?i:\bbeing\s+(?:first\s+)?duly\s+sworn\b|\bsworn\s+to\s+(?:and\s+subscribed\s+)?before\s+me\b)",
        r"(?i:\bdeclare\s+under\s+penalty\s+of\s+perjury\b)",
        r"(?m)^\s*(?:AFFIDAVIT|DECLARATION)\s+OF\b",
    ],
    "discovery": [
        r"(?i:\binterrogator(?:y|ies)\b)",
        r"(?i:\brequests?\s+for\s+(?:production|admission)\b)",
        r"(?i:\bnotice\s+of\s+deposition\b)",
    ],
    "invoice": [
        r"(?i:\binvoice\s+(?:no\.?|number|#|date)\b)",
        r"(?i:\b(?:amount|balance|total)\s+due\b)",
        r"(?i:\bremit\s+(?:payment\s+)?to\b)",
    ],
}
_COMPILED = {label: [re.compile(p) for p in patterns] for label, patterns in _CUES.items()}
MAX_CUES = 3  # more cues of one kind add nothing: a genre is marked, not counted


def cue_counts(text: str) -> dict[str, int]:
    """Per label, how many of its distinct cues the text shows (capped at MAX_CUES)."""
    return {
        label: min(MAX_CUES, sum(1 for p in patterns if p.search(text)))
        for label, patterns in _COMPILED.items()
    }
