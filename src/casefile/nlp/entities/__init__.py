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
