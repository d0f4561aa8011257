"""Entities with offsets: people, organisations, dates, money and legal citations.

People and organisations: spaCy's small English NER model (ner.py, installed as a package, nothing
downloaded) plus legal rules (names.py). On real documents rules alone found fewer than one person
in five (issue 13): counsel lists, amici and bodies without a legal form follow no layout a rule
can know. The model's spans are checked by rules (no courts, no defined terms or capitalised
common phrases, no addresses, glued words cut, parties of cited cases left out), and the rules
keep what they know better: signature blocks, captions, panels and justices, legal forms.
Dates, money and citations stay rules: the research (docs/research/local-ai-options.md §5) found
the small model mislabels exactly those (amounts, numeric dates). Citations come from eyecite
(Free Law Project), with rules for what it misses (sections with letter suffixes such as
`15 U.S.C. § 1692c`, statute lists `§§ 1155, 5107(b)` one citation per section, ranges by their
first section, state laws by name, state codes without `§` such as `KRS 117.235`, Illinois
`ILCS`, federal, circuit and state court rules); line breaks inside a citation are ignored.

Conventions (also in docs/decisions/0007-ai-pipeline.md):
- dates: full calendar dates only, as ISO `YYYY-MM-DD`; a day range ("April 25 and 26, 1996")
  gives both dates; two-digit years with slashes (`04/16/21`) are 2000-2049 or 1950-1999.
  Ambiguous numeric dates with slashes or dashes are read month-first (US usage: `05/01/2024` is
  1 May); when the first number cannot be a month (`21/03/2025`) day-first is used. Dotted numeric
  dates (`15.06.2024`) are day-first (European usage).
- money: `{"amount": "12500.00", "currency": "USD"}`, symbols and codes mapped to ISO 4217;
  `1.234,56` (decimal comma) is understood; `$3.2 million` is `3200000.00`; amounts in words
  ("one million dollars") are read.
- citations: the normalised citation string is the `value` (`347 U.S. 483`,
  `42 U.S.C. § 1983`: subsections dropped), with eyecite's fields.
- parties of *cited* cases stay on their citation (plaintiff/defendant) and are not listed as
  people or organisations of the document: they are not actors in the matter.

Items: `{"text", "value"?, "occurrences": [{"page", "start", "end"}], ...}`, one per normalised
value, in order of first occurrence. One module per kind; `extract_entities` runs them all.
"""

from __future__ import annotations

from typing import Any

from ..types import Page
from .citations import find_citations
from .dates import find_dates
from .money import find_money
from .names import find_names


def extract_entities(pages: list[Page]) -> dict[str, list[dict[str, Any]]]:
    # A non-breaking space is a space to every rule and to the model (EDGAR PDFs join every word of
    # a paragraph with U+00A0); one character for one, so the offsets stay those of the stored text.
    pages = [Page(page.number, page.text.replace("\xa0", " ")) for page in pages]
    # Cited cases' parties are found first so that the name rules can leave them out.
    citations, cited_parties = find_citations(pages)
    people, organizations = find_names(pages, cited_parties)
    return {
        "people": people,
        "organizations": organizations,
        "dates": find_dates(pages),
        "money": find_money(pages),
        "citations": citations,
    }
