"""The pieces the name finders share (organizations.py, people.py, model_names.py): the regular
expressions a company's or a person's name is made of, legal forms and body suffixes, the checks
both kinds of name pass, and what the whole document says about its words (`Vocabulary`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..resources import alternatives, word_set
from ..types import Page

LEGAL_FORM = rf"(?:{alternatives('legal_forms')})\b\.?"
BODY_SUFFIX = r"(?:Bank|BANK|Fund|FUND|Commission|Agency|Bureau|Authority)\b"
ORG_SUFFIX = rf"(?:{LEGAL_FORM}|{BODY_SUFFIX})(?:,?[ ]{LEGAL_FORM})?"
# Names never cross a line: a caption's lines are separate names.
NAME_WORD = r"(?:[A-Z][A-Za-z'\u2019-]*\.?|[a-z][A-Z][A-Za-z]+|&)"
# Words a company's name may have that a person's may not: dotted initials ("V.O.S."), a web
# domain ("BorrowMoney.com"), a leading number with letters or a hyphen ("313Acquisition",
# "70-35 113th St.") or of five digits or more (the numbered "695014 B.C. Ltd.").
COMPANY_WORD = (
    r"(?:(?:[A-Z]\.){2,}|[A-Za-z][\w-]*\.(?:com|COM)|\d+[A-Za-z][\w-]*|\d+-\d+[\w-]*|\d{5,}|"
    + NAME_WORD
    + ")"
)

COURT_PART = re.compile(
    r"\b(?:First|Second|Third|Fourth|Fifth|Sixth|Seventh|Eighth|Ninth|Tenth|Eleventh)"
    r"(?:[ ]Judicial)?[ ](?:Department|District|Circuit)\b"
)
LEADING_NOISE = re.compile(rf"^(?:(?:{alternatives('leading_noise_words')}|(?i:In[ ]re))\b[:,]?\s+)+")
# "Chief Technology Officer of Northpoint Software, Inc.": the role is not part of the name.
ORG_WORDS = word_set("organization_words")
LEGAL_FORM_WORDS = word_set("legal_forms") - {"Co", "CO", "AG", "PC"}  # also initials or names
NOT_NAME_WORDS = word_set("not_name_words")
ORG_HEAD_WORDS = word_set("organization_head_words")
FUNCTION_WORDS = frozenset({"of", "the", "and", "for", "in", "on", "de", "&"})
DEFINED_TERM = re.compile(r"[\"\u201c]([A-Z][^\"\u201d\n]{1,60})[\"\u201d]")


def org_key(name: str) -> str:
    """Deduplication key: case, punctuation and a leading "The" do not make a new organisation."""
    key = re.sub(r"[^\w&]+", " ", name.casefold()).strip()
    return re.sub(r"^the ", "", key)


def title_case(name: str) -> str:
    return " ".join(w if len(w) <= 2 and w.endswith(".") else w.capitalize() for w in name.split())


ORG_AFTER = re.compile(rf",?[ ]{ORG_SUFFIX}")


def valid_person(name: str) -> bool:
    words = name.split()
    if not words or any(w.strip(".,") in NOT_NAME_WORDS or w in ORG_WORDS for w in words):
        return False
    if any(w.strip(",") in LEGAL_FORM_WORDS or w.strip(".,") in LEGAL_FORM_WORDS for w in words):
        return False  # "Cooley LLP", "Sandhill Amusements, Inc." are firms
    return not all(len(w.rstrip(".")) == 1 for w in words)


def person_key_text(name: str) -> str:
    return " ".join(person_key(name))


def person_key(name: str) -> tuple[str, ...]:
    return tuple(w.strip(".").casefold() for w in name.split())


Mention = tuple[str, int, int, int]  # (name, page, start, end)


@dataclass
class ModelNames:
    people: list[Mention] = field(default_factory=list)
    organizations: list[Mention] = field(default_factory=list)


@dataclass
class Vocabulary:
    """What the whole document says about words: those it writes in lower case (so they are
    ordinary words, not names) and the terms it defines in quotes ("Confidential Information")."""

    lower: frozenset[str]
    defined: frozenset[str]

    @classmethod
    def of(cls, pages: list[Page]) -> Vocabulary:
        text = "\n".join(page.text for page in pages)
        lower = frozenset(re.findall(r"(?<![\w])[a-z][a-z'-]+(?![\w])", text))
        defined = frozenset(" ".join(m.group(1).split()).casefold() for m in DEFINED_TERM.finditer(text))
        return cls(lower, defined)

    def has_proper_word(self, name: str) -> bool:
        """Some word of the name is never written in lower case in the document: a proper name,
        not a capitalised common phrase ("Marketing Materials", "Appearance Form")."""
        words = [w.strip(".,'\u2019") for w in name.split()]
        content = [w.casefold() for w in words if len(w) > 1 and w.casefold() not in FUNCTION_WORDS]
        return any(w not in self.lower for w in content)
