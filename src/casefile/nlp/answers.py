"""How well a sentence can answer a question, beyond meaning alone (used by `/cases/{id}/ask`).

The embedding finds sentences about the question's subject; a lawyer asking "when does the term
end?" wants the one that states a date, not the agreement's title that names the term. So:

- the kind of fact a question asks for (a date, a duration, an amount, a person or body, a place)
  is read from its wording, and a sentence stating a fact of that kind scores more;
- headings, captions and preambles (text mostly in capitals, caption brackets, "Re:" lines,
  "THIS AGREEMENT made ... between" openings) score less: they name a subject, they state nothing.
"""

from __future__ import annotations

import re

from .entities.dates import find_dates
from .entities.money import find_money
from .types import Page
from .words import content_words

# What a question asks for, from its wording.
_ASKS = {
    "date": re.compile(
        r"(?i)^\s*(?:by\s+)?when\b|\bwhat\s+(?:date|day|year)\b|\bon\s+which\s+date\b|\bdeadline\b"
    ),
    "duration": re.compile(r"(?i)\bhow\s+long\b|\bfor\s+how\s+many\b|\b(?:term|period|duration)\b"),
    "amount": re.compile(
        r"(?i)\bhow\s+much\b|\bwhat\s+(?:\w+\s+){0,2}(?:fee|price|amount|sum|payment|compensation|rent|salary|cost)s?\b"
        r"|\bwhat\s+share\b|\bwhat\s+percentage\b"
    ),
    "party": re.compile(
        r"(?i)^\s*(?:to\s+)?(?:who|whom)\b|\bwhich\s+(?:company|firm|party|person|court|judge)\b"
    ),
    "place": re.compile(
        r"(?i)^\s*where\b|\bin\s+which\s+(?:country|state|city|area|territory)\b|\b(?:area|territory)\b"
    ),
    "reason": re.compile(r"(?i)^\s*why\b|\bfor\s+what\s+reason\b|\bon\s+what\s+(?:ground|basis)s?\b"),
    "law": re.compile(
        r"(?i)\bgoverning\s+law\b|\bwhich\s+(?:state'?s?|country'?s?)\s+laws?\b|\bwhat\s+law\b"
    ),
}
# A sentence that gives a reason: "because", "based on the evidence", "concluding that", "finds".
_REASON = re.compile(
    r"(?i)\bbecause\b|\bsince\b|\bdue\s+to\b|\bon\s+the\s+grounds?\b|\bbased\s+on\b|\breason(?:ed|s)?\b"
    r"|\bconclud(?:ed|ing)\s+that\b|\bfinds?\b|\bfound\s+that\b|\bheld\s+that\b|\bin\s+light\s+of\b"
    r"|\bas\s+grounds\b"
)
_LAW = re.compile(
    r"(?i)\bgoverned\s+by\b|\bconstrued\s+(?:in\s+accordance\s+with|under)\b|\blaws?\s+of\s+(?:the\s+)?[A-Z]"
)
_DURATION = re.compile(
    r"(?i)\b(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty"
    r"|forty[- ]five|sixty|ninety)\s*(?:\(\d+\)\s*)?(?:calendar\s+|business\s+)?"
    r"(?:years?|months?|weeks?|days?)\b"
    r"|\buntil\b|\bexpires?\b|\bterminat"
)
_PERCENT = re.compile(r"\d\s*%|\bper\s*cent\b|\bpercent\b|\b(?:half|third|quarter)\b", re.IGNORECASE)
_NAME = re.compile(r"(?<=[a-z,;:]\s)[A-Z][a-z]+(?:\s+(?:[A-Z]\.\s+)?[A-Z][a-z]+)+")
_PLACE = re.compile(r"\b(?:in|within|throughout|of)\s+(?:the\s+)?[A-Z][a-z]+")
_CAPTION_MARK = re.compile(r"\]\s|^\s*(?:RE|Re|IN RE|In re):|\bv\.\s|\bversus\b|[ \t]\)\s*$")
# Header and footer fields state no fact: "Subject: Activity in Case ...", "Source: ACME INC., 8-K".
_FIELD = re.compile(
    r"^\s*(?:Subject|Source|From|To|Cc|Date|Sent|Case|Re|RE|File\s+Name|Docket)\s*(?:No\.?|#)?\s*:"
)
# The heading may run into it: "Exhibit 10.1JOINT VENTURE AGREEMENTTHIS JOINT VENTURE AGREEMENT ...".
_PREAMBLE = re.compile(
    r"(?i)^\W*(?:exhibit\s*[\d.]+[a-z]?\s*)?(?:[\w ]{0,60}?agreement\s*)?"
    r"this\s+(?:[\w-]+\s+){0,6}agreement\b.{0,200}\b(?:made|between)\b"
)
_CAPITALISED_WORD = re.compile(r"\b[A-Z][A-Za-z'-]*\b")
_WORD = re.compile(r"\b[A-Za-z][A-Za-z'-]*\b")

FACT_BONUS = 0.08  # a sentence stating the kind of fact asked for
HEADING_PENALTY = 0.2  # at most, for a sentence that is all heading


# "When does the term end?" asks for the end of something: a date alone (the signing date of the
# preamble) is not its answer, a date with an end cue is (issue 31: the right kind of fact from the
# wrong event).
_ASKS_END = re.compile(r"(?i)\b(?:end|ends|expire|expires|terminate|terminates|run\s+out)\b")
_END = re.compile(r"(?i)\b(?:until|through|expir\w*|terminat\w*|end(?:s|ing)?|thereafter|renew\w*)\b")


def asked_kinds(question: str) -> set[str]:
    """The kinds of fact a question asks for: date, end, duration, amount, party, place, reason,
    law (may be none)."""
    kinds = {kind for kind, pattern in _ASKS.items() if pattern.search(question)}
    if "date" in kinds and _ASKS_END.search(question):
        kinds = (kinds - {"date"}) | {"end"}
    return kinds


def states_kind(sentence: str, kind: str) -> bool:
    page = [Page(1, sentence)]
    if kind == "date":
        return bool(find_dates(page))
    if kind == "end":
        return bool(_END.search(sentence)) and bool(find_dates(page))
    if kind == "duration":
        return bool(_DURATION.search(sentence))
    if kind == "amount":
        return bool(find_money(page)) or bool(_PERCENT.search(sentence))
    if kind == "party":
        return bool(_NAME.search(sentence))
    if kind == "place":
        return bool(_PLACE.search(sentence))
    if kind == "reason":
        return bool(_REASON.search(sentence))
    if kind == "law":
        return bool(_LAW.search(sentence))
    return False


def is_header_field(sentence: str) -> bool:
    """An e-mail's or a filing's header or footer field ("Subject: Activity in Case ...", "Source:
    ACME INC., 8-K, 1/21/2020"): it labels the document, it answers nothing (issue 31: a footer's
    filing date was given as the date of the event asked about)."""
    return bool(_FIELD.search(sentence))


def heading_share(sentence: str) -> float:
    """0 for a sentence of prose, up to 1 for a heading, caption or preamble."""
    words = _WORD.findall(sentence)
    if not words:
        return 1.0
    upper = sum(1 for w in words if len(w) > 1 and w.isupper()) / len(words)
    capitalised = len(_CAPITALISED_WORD.findall(sentence)) / len(words)
    share = max(upper, max(0.0, capitalised - 0.5) * 2)
    if _CAPTION_MARK.search(sentence) or _PREAMBLE.search(sentence):
        share = max(share, 0.6)
    return min(1.0, share)


RESTATEMENT_PENALTY = 0.1  # a sentence that only says again what the question says
NAME_BONUS = 0.1  # times the share of the question's names found where the sentence is


def restates(question: str, sentence: str) -> bool:
    """Whether the sentence adds at most one content word to the question's ("Why was relief
    denied?" - "His requested relief is denied at this time."): it restates, it does not answer."""
    asked = {w[:5] for w in content_words(question)}
    added = {w for w in content_words(sentence) if w[:5] not in asked}
    return len(added) <= 1


def question_names(question: str) -> list[str]:
    """The names a question gives (capitalised words after its first): "Charles Martin" in "When is
    the hearing on the motion to sell in the Charles Martin case?"."""
    return [w for w in _CAPITALISED_WORD.findall(question.split(None, 1)[-1]) if len(w) > 1]


def name_share(names: list[str], context: str) -> float:
    """The share of the question's names its candidate's passage and document title hold."""
    if not names:
        return 0.0
    words = {w.casefold() for w in _WORD.findall(context)}
    return sum(1 for name in names if name.casefold() in words) / len(names)


def answer_adjustment(question: str, sentence: str, kinds: set[str] | None = None) -> float:
    """What to add to a sentence's similarity to the question: a bonus for stating the kind of fact
    asked for, a penalty for being a heading and for restating the question."""
    kinds = asked_kinds(question) if kinds is None else kinds
    bonus = FACT_BONUS if any(states_kind(sentence, kind) for kind in kinds) else 0.0
    if restates(question, sentence):
        bonus -= RESTATEMENT_PENALTY
    return bonus - HEADING_PENALTY * heading_share(sentence)
