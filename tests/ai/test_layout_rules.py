"""The rules for legal layout that issue 31's round 3 added, each on a line as a real document of
tests/ai/real writes it (its id in the test's name or comment): a sentence glued to the next by
the extraction, dates as forms and e-mails write them, judges of a panel, an electronic signature
mid-line, a list of counsel one a line, a firm in an address block, words joined by non-breaking
spaces, and an e-mail's or filing's header field that is no answer."""

from __future__ import annotations

import pytest

from casefile.nlp.answers import is_header_field
from casefile.nlp.entities import extract_entities
from casefile.nlp.entities.dates import find_dates
from casefile.nlp.sentences import split_sentences
from casefile.nlp.type_cues import cue_counts
from casefile.nlp.types import Page


def _sentences(text: str) -> list[str]:
    return [span.text for span in split_sentences(Page(1, text))]


def _people(text: str) -> set[str]:
    return {item["text"] for item in extract_entities([Page(1, text)])["people"]}


def _organizations(text: str) -> set[str]:
    return {item["text"] for item in extract_entities([Page(1, text)])["organizations"]}


def test_a_sentence_glued_to_the_next_is_two_sentences() -> None:
    # c12 and c20 (CUAD's text of EDGAR filings): no space after the full stop.
    assert _sentences(
        "may change from time to time.\u201dOceanic Time Warner Cable will use the content solely"
        " on channel 777."
    ) == [
        "may change from time to time.\u201d",
        "Oceanic Time Warner Cable will use the content solely on channel 777.",
    ]
    assert _sentences(
        "The Products are described on Exhibit A to this Agreement.2.The Principal grants rights."
    ) == [
        "The Products are described on Exhibit A to this Agreement.",
        "The Principal grants rights.",  # the list number is numbering, not the sentence
    ]


@pytest.mark.parametrize(
    "text", ["Mr.Smith signed it.", "See e.g.Foo Corp. for more.", "Filed in the U.S.District Court today."]
)
def test_an_abbreviation_glued_to_a_name_ends_no_sentence(text: str) -> None:
    assert _sentences(text) == [text]


@pytest.mark.parametrize(
    ("text", "iso"),
    [
        ("Date of injury: 30-Dec-2018", "2018-12-30"),
        ("Received 2018/12/30 by the clerk", "2018-12-30"),
        ("effective as of June 1,2019 between", "2019-06-01"),
    ],
)
def test_dates_as_forms_and_extractions_write_them(text: str, iso: str) -> None:
    assert [item["value"] for item in find_dates([Page(1, text)])] == [iso]


def test_numbers_that_are_not_dates_stay_numbers() -> None:
    assert find_dates([Page(1, "See Section 3,2019 of the Code and No. 2019/12/45.")]) == []


def test_a_per_curiam_panel_and_a_signature_mid_line() -> None:
    # o12 (Federal Circuit judgment).
    text = (
        "ORDERED and ADJUDGED: \n \nPer Curiam (BRYSON, GAJARSA, and PROST, Circuit Judges.) \n \n"
        "AFFIRMED.\n\nDATED:  February 5, 2010   /s/ Jan Horbaly    \nJan Horbaly, Clerk \n"
    )
    assert {"Bryson", "Gajarsa", "Prost", "Jan Horbaly"} <= _people(text)


@pytest.mark.parametrize(
    ("line", "judges"),
    [
        # o11 (D.C. Circuit): small capitals as the text layer gives them, and a senior judge.
        (
            "Before: B ROWN and K AVANAUGH, Circuit Judges , and \nWILLIAMS, Senior Circuit Judge. \n",
            {"Brown", "Kavanaugh", "Williams"},
        ),
        # o07 (Sixth Circuit): the chief judge first, after a semicolon.
        (
            "Before:  BATCHELDER, Chief Judge; SILER and GILMAN, Circuit Judges.\n",
            {"Batchelder", "Siler", "Gilman"},
        ),
        # o03 (Second Circuit): "AND" in capitals.
        ("Before:\nLEVAL, STRAUB, AND WESLEY, Circuit Judges.\n", {"Leval", "Straub", "Wesley"}),
    ],
)
def test_every_judge_of_a_panel(line: str, judges: set[str]) -> None:
    found = _people(line)
    assert judges <= found
    assert not {name for name in found if name.startswith(("B ", "K ", "And "))}


def test_a_list_of_counsel_one_a_line() -> None:
    # o16 (First Circuit order): names a model or an English word list would pass over.
    text = (
        "/s/ Margaret Carter, Clerk\nDavid E. Barry\nKelly M. Moore\nC. Leonard O'Brien\nR. Daniel Prentiss\n"
    )
    assert {"Kelly M. Moore", "C. Leonard O'Brien", "R. Daniel Prentiss"} <= _people(text)


def test_counsel_in_capitals_for_a_party() -> None:
    # o03 (Second Circuit).
    text = (
        "AFFIRMED.\n\nEAMONN DORNAN, Dornan & Associates, P.L.L.C., New\n"
        "York, New York, for Plaintiff-Appellant.\n"
    )
    assert "Eamonn Dornan" in _people(text)


def test_the_firm_between_a_name_and_a_street() -> None:
    # o18 (Third Circuit clerk's letter): firms with no legal form, one of them a single word.
    text = (
        "Philip S. Goldberg \nShook Hardy & Bacon  \n1800 K Street, NW \n \n"
        "Anthony P. Callaghan \nGibbons  \nOne Pennsylvania Plaza \n37th Floor \nNew York, NY 10119 \n"
    )
    assert {"Shook Hardy & Bacon", "Gibbons"} <= _organizations(text)
    assert not {"Anthony P. Callaghan", "Philip S. Goldberg"} & _organizations(text)


def test_words_joined_by_non_breaking_spaces_are_a_name() -> None:
    # k19 (CUAD PDF): every space of the paragraph is U+00A0.
    text = (
        "1.1.\xa0Silicon\xa0Smelters\xa0(Pty)\xa0Ltd\xa0and\xa0Espacio\xa0Information\xa0Technology"
        "\xa0SA\xa0both\xa0belong."
    )
    found = extract_entities([Page(1, text)])["organizations"]
    assert "Espacio Information Technology SA" in {item["text"] for item in found}
    # Offsets still point into the page as stored.
    item = next(i for i in found if i["text"] == "Espacio Information Technology SA")
    occurrence = item["occurrences"][0]
    assert text[occurrence["start"] : occurrence["end"]] == "Espacio\xa0Information\xa0Technology\xa0SA"


@pytest.mark.parametrize(
    ("line", "is_field"),
    [
        ("Source: REYNOLDS CONSUMER PRODUCTS INC., S-1/A, 1/21/2020", True),  # k22
        (
            "Subject: Activity in Case 3:25-cv-01039-SB Murch v. Compass Washington, LLC et al Motion",
            True,
        ),  # m16
        ("Filing fee in the amount of $300 collected; Agency Tracking ID: AORDC-9949521.", False),  # m16
    ],
)
def test_a_header_field_is_no_answer(line: str, is_field: bool) -> None:
    assert is_header_field(line) is is_field


@pytest.mark.parametrize(
    ("title", "is_order"),
    [
        ("SUGGESTION OF REMAND AND\nTRANSFER ORDER\n", True),  # f13 (D. Ariz.)
        ("EXPEDITED HEARING ORDER\n", True),
        ("MOTION FOR PROTECTIVE ORDER\n", False),  # a motion asks for an order
        ("[PROPOSED] ORDER\n", False),
    ],
)
def test_a_title_that_ends_in_order_marks_a_court_order(title: str, is_order: bool) -> None:
    text = f"IN THE UNITED STATES DISTRICT COURT\n\n{title}\nThis proceeding involves personal injury cases."
    assert (cue_counts(text)["court_order"] == 1) is is_order
