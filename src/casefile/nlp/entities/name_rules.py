"""The pieces the name finders share (organizations.py, people.py, model_names.py): the regular
expressions a company's or a person's name is made of, legal forms and body suffixes, the checks
both kinds of name pass, and what the whole document says about its words (`Vocabulary`)."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

from ..resources import alternatives, word_set
from ..types import Page

# Legal forms of other countries, from cleanco (MIT; its term list ships in the package): "AB",
# "Oy", "S.A.", "Ltda.", "Pty Ltd", "S. de R.L.", "Sdn Bhd". Written capitalised or in capitals
# ("a Swedish ab" is no name); forms of two letters or fewer only in capitals, since in other
# cases they are words or initials ("As", "Da"). Forms that are also common words are left out.
_CLEANCO_LEFT_OUT = frozenset(
    {
        "as",
        "et",
        "da",
        "pp",
        "sd",
        "ee",
        "ij",
        "kt",
        "xt",
        "xk",
        "qk",
        "vat",
        "teo",
        "fie",
        "og",
        "oe",
        "hb",
        "mb",
        "nl",
        "ks",
        "kd",
        "pt",
        "kb",
        "ky",
        "ae",
        "ay",
        "aj",
        "sal",
        "ans",
        "esv",
        "cpt",
        "dat",
        "aat",
        "zat",
        "tov",
        "ood",
        "stg",
        "pte",
        "private",
        "unlimited",
        "company",
        "corporation",
        "incorporated",
        "limited",
        "3at",
        "gte.",
        "nuf",
        "tmi",
        "t:mi",
        "secs",
        "ses.",
        "ultd",
        "unltd",
        "sae",
        "saoc",
        "saog",
        "smba",
        "obrt",
        "ehf.",
    }
)


def _cleanco_forms() -> list[str]:
    from cleanco.termdata import terms_by_type

    patterns = []
    for term in sorted({t.strip() for terms in terms_by_type.values() for t in terms}, key=len, reverse=True):
        letters = re.sub(r"[^a-z]", "", term)
        if term in _CLEANCO_LEFT_OUT or term.startswith("&") or not letters:
            continue
        written = re.escape(term).replace(r"\ ", r"\s?")
        if len(letters) <= 2:
            patterns.append(written.upper())
        else:
            patterns.append(rf"(?=[A-Z])(?i:{written})")
    return patterns


LEGAL_FORM = rf"(?:{alternatives('legal_forms')}|{'|'.join(_cleanco_forms())})(?![\w])\.?"
# Bodies without a legal form: "Federal Communications Commission", "Metropolitan Police Department".
BODY_WORDS = word_set("body_words")
BODY_SUFFIX = rf"(?:{alternatives('body_words')})\b"
ORG_SUFFIX = rf"(?:{LEGAL_FORM}|{BODY_SUFFIX})(?:,?[ ]{LEGAL_FORM})?"
# Names never cross a line: a caption's lines are separate names. "AT&T" and "plan_b" are words.
NAME_WORD = r"(?:[A-Z]+&[A-Z]+|[A-Z][A-Za-z_'\u2019-]*\.?|[a-z][A-Z][A-Za-z]+|&)"
# Words a company's name may have that a person's may not: dotted initials ("V.O.S."), a web
# domain ("BorrowMoney.com"), a leading number with letters or a hyphen ("313Acquisition",
# "70-35 113th St.") or of five digits or more (the numbered "695014 B.C. Ltd.").
COMPANY_WORD = (
    r"(?:(?:[A-Z]\.){2,}|[A-Za-z][\w-]*\.(?:com|COM)|\d+[A-Za-z][\w-]*|\d+-\d+[\w-]*|\d{5,}|"
    + NAME_WORD
    + ")"
)

# Courts named by their department or district ("Appellate Division, Second Department").
COURT_PART = re.compile(
    r"\b(?:First|Second|Third|Fourth|Fifth|Sixth|Seventh|Eighth|Ninth|Tenth|Eleventh)"
    r"(?:[ ]Judicial)?[ ](?:Department|District|Circuit)\b"
)
LEADING_NOISE = re.compile(rf"^(?:(?:{alternatives('leading_noise_words')}|(?i:In[ ]re))\b[:,]?\s+)+")
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


# Lower-case words a person's name may have ("Olga Vysotskaya de Brito", "Ludwig van Beethoven").
PERSON_PARTICLES = frozenset(
    {"de", "van", "von", "da", "del", "der", "la", "le", "di", "du", "dos", "bin", "al"}
)


def valid_person(name: str) -> bool:
    words = name.split()
    if not words or any(w.strip(".,") in NOT_NAME_WORDS or w in ORG_WORDS for w in words):
        return False
    if any(w[:1].islower() and w not in PERSON_PARTICLES for w in words):
        return False  # "and or Assigns" is no name
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


# A line of wrapped prose: long, or ending on a word that must go on.
_WRAPPED_MIN_CHARS = 40
_ENDS_ON_LINK = re.compile(r"(?:\b(?i:of|for|the|and|with whom)|&)$")


def join_wrapped_lines(text: str) -> str:
    """The text with the line breaks of wrapped prose turned into spaces, so that a name the
    wrapping cut ("Athens\nChurch of the Open Bible", "Foundation of\nNorthern California") reaches
    the model whole. Lengths and offsets are unchanged; short lines (captions, counsel blocks,
    addresses) keep their breaks unless they end on a word that must go on ("of", "for", "and").
    Line by line: linear in the text's length."""
    lines = text.split("\n")
    out = []
    for line, following in itertools.pairwise(lines):
        wrapped = following.strip() and (len(line) >= _WRAPPED_MIN_CHARS or _ENDS_ON_LINK.search(line))
        out.append(line + (" " if wrapped else "\n"))
    out.append(lines[-1])
    return "".join(out)


def is_person_name(name: str) -> bool:
    """Whether probablepeople (MIT; a CRF model that ships in the package) reads `name` as a
    person's rather than a company's: "Fred P. Baggett" is, "Concentra" and "Wiley Law Firm" are
    not. A name it cannot parse is not taken for a person."""
    import probablepeople  # a CRF model, loaded on first use

    try:
        _, kind = probablepeople.tag(name)
    except probablepeople.RepeatedLabelError:
        return False
    return bool(kind == "Person")
