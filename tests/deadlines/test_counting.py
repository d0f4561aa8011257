"""The counting engine against dates worked out by hand with a wall calendar.

Each case states its reasoning. Counting per FRCP 6(a)(1): the trigger day is not counted, every
day is counted (weekends and legal holidays too), the last day is included, and a last day that
is a Saturday, Sunday or legal holiday runs on to the next day that is none of those; backward
("before") periods run on to the previous such day (6(a)(5)). Court days skip closed days while
counting. US federal holidays 2026-2027 used below: Mon 25 May 2026 Memorial Day; Fri 3 Jul 2026
Independence Day observed (4 Jul is a Saturday); Mon 12 Oct 2026 Columbus Day; Thu 26 Nov 2026
Thanksgiving; Fri 25 Dec 2026 Christmas; Fri 1 Jan 2027 New Year's Day; Mon 18 Jan 2027 Martin
Luther King Jr. Day; Fri 18 Jun 2027 Juneteenth observed (19 Jun is a Saturday).
"""

from __future__ import annotations

import tomllib
from datetime import date
from pathlib import Path

import pytest

from casefile.deadlines.counting import CourtCalendar, compute
from casefile.deadlines.rulesets import (
    RULES_DIR,
    HolidayCalendar,
    Rule,
    RuleSetDefinition,
    load_rule_sets,
    shipped_rule_sets,
)

FRCP = shipped_rule_sets()["frcp"]
FEDERAL = CourtCalendar(FRCP.calendar)


def frcp(rule_id: str, trigger_date: date) -> date:
    rule = next(r for r in FRCP.rules if r.id == rule_id)
    return compute(rule, trigger_date, FEDERAL).due_on


def rule(days: int, counting: str = "calendar", direction: str = "after") -> Rule:
    return Rule.model_validate(
        {
            "id": "r",
            "title": "R",
            "trigger": "t",
            "days": days,
            "counting": counting,
            "direction": direction,
            "citation": "test",
        }
    )


@pytest.mark.parametrize(
    ("rule_id", "trigger_date", "due_on"),
    [
        # Served Fri 4 Dec 2026; day 21 is Fri 25 Dec (Christmas), then Sat 26 and Sun 27:
        # the answer is due Mon 28 Dec 2026.
        ("answer", date(2026, 12, 4), date(2026, 12, 28)),
        # Served Thu 5 Nov 2026; day 21 is Thu 26 Nov (Thanksgiving); Fri 27 Nov is not a federal
        # holiday, so the answer is due Fri 27 Nov 2026.
        ("answer", date(2026, 11, 5), date(2026, 11, 27)),
        # Served Fri 12 Jun 2026; 18 days reach Tue 30 Jun, 3 more Fri 3 Jul: Independence Day
        # observed (4 Jul is a Saturday). Sat 4 and Sun 5 are closed: due Mon 6 Jul 2026.
        ("answer", date(2026, 6, 12), date(2026, 7, 6)),
        # Served Mon 1 Mar 2027; day 21 is Mon 22 Mar, an ordinary Monday: no roll-over.
        ("answer", date(2027, 3, 1), date(2027, 3, 22)),
        # Served Fri 20 Nov 2026; Thanksgiving (26 Nov) falls inside the period and counts like any
        # day: 10 days reach Mon 30 Nov, 11 more Fri 11 Dec 2026.
        ("answer", date(2026, 11, 20), date(2026, 12, 11)),
        # Served on a Saturday, 26 Dec 2026: 5 days reach Thu 31 Dec, 16 more Sat 16 Jan 2027; Sat,
        # Sun 17 and Mon 18 (Martin Luther King Jr. Day) are closed: due Tue 19 Jan 2027.
        ("answer", date(2026, 12, 26), date(2027, 1, 19)),
        # Waiver requested Thu 1 Oct 2026: 30 days reach Sat 31 Oct, 30 more Mon 30 Nov 2026.
        ("answer_after_waiver", date(2026, 10, 1), date(2026, 11, 30)),
        # Counterclaim served Mon 21 Sep 2026: 9 days reach Wed 30 Sep, 12 more Mon 12 Oct, which
        # is Columbus Day (a legal holiday under 6(a)(6)(A)): due Tue 13 Oct 2026.
        ("answer_to_counterclaim", date(2026, 9, 21), date(2026, 10, 13)),
        # Judgment entered Wed 2 Dec 2026: 14 days is Wed 16 Dec (fees motion) ...
        ("attorneys_fees", date(2026, 12, 2), date(2026, 12, 16)),
        # ... 28 days is Wed 30 Dec (new trial, Rule 50(b), Rule 59(e)) ...
        ("new_trial", date(2026, 12, 2), date(2026, 12, 30)),
        ("renewed_judgment_as_matter_of_law", date(2026, 12, 2), date(2026, 12, 30)),
        ("alter_or_amend_judgment", date(2026, 12, 2), date(2026, 12, 30)),
        # ... and 30 days is Fri 1 Jan 2027 (New Year's Day), then Sat 2 and Sun 3: the notice of
        # appeal is due Mon 4 Jan 2027.
        ("notice_of_appeal", date(2026, 12, 2), date(2027, 1, 4)),
        # Judgment entered Fri 4 Jun 2027: day 14 is Fri 18 Jun, Juneteenth observed (19 Jun is a
        # Saturday); Sat 19 and Sun 20 are closed: the fees motion is due Mon 21 Jun 2027.
        ("attorneys_fees", date(2027, 6, 4), date(2027, 6, 21)),
        # Backward: scheduling conference Mon 15 Jun 2026; 21 days before is Mon 25 May, Memorial
        # Day; counting on backward (6(a)(5)) past Sun 24 and Sat 23: Fri 22 May 2026.
        ("rule_26f_conference", date(2026, 6, 15), date(2026, 5, 22)),
        # Backward: trial Mon 1 Mar 2027; 1 day back is Sun 28 Feb, 28 more Sun 31 Jan, 1 more
        # Sat 30 Jan (day 30), a Saturday: back to Fri 29 Jan 2027.
        ("pretrial_disclosures", date(2027, 3, 1), date(2027, 1, 29)),
        # Backward: 90 days before Mon 1 Mar 2027: 28 days to Mon 1 Feb, 31 to Fri 1 Jan, 31 to
        # Tue 1 Dec 2026, an ordinary Tuesday.
        ("expert_disclosures", date(2027, 3, 1), date(2026, 12, 1)),
    ],
)
def test_frcp_dates_worked_by_hand(rule_id: str, trigger_date: date, due_on: date) -> None:
    assert frcp(rule_id, trigger_date) == due_on


def test_court_days_across_a_holiday_weekend() -> None:
    # From Thu 21 May 2026, 3 court days: Fri 22 (1); Sat 23, Sun 24 and Mon 25 (Memorial Day)
    # are not counted; Tue 26 (2), Wed 27 (3): due Wed 27 May 2026.
    computed = compute(rule(3, "court"), date(2026, 5, 21), FEDERAL)
    assert computed.due_on == date(2026, 5, 27)
    skipped = [(s.date, s.note) for s in computed.trace if s.step == "skipped"]
    assert skipped == [
        (date(2026, 5, 23), "2026-05-23 Saturday (weekend): not counted"),
        (date(2026, 5, 24), "2026-05-24 Sunday (weekend): not counted"),
        (date(2026, 5, 25), "2026-05-25 Memorial Day (legal holiday): not counted"),
    ]
    # The same 3 days counted as calendar days end on Sun 24 May, roll past Memorial Day: Tue 26.
    assert compute(rule(3), date(2026, 5, 21), FEDERAL).due_on == date(2026, 5, 26)


def test_court_days_backward() -> None:
    # 2 court days before Tue 19 Jan 2027: Mon 18 (MLK Day), Sun 17 and Sat 16 are not counted;
    # Fri 15 (1), Thu 14 (2): due Thu 14 Jan 2027.
    assert compute(rule(2, "court", "before"), date(2027, 1, 19), FEDERAL).due_on == date(2027, 1, 14)


def test_trace_of_the_christmas_answer() -> None:
    computed = compute(next(r for r in FRCP.rules if r.id == "answer"), date(2026, 12, 4), FEDERAL)
    steps = [(s.step, s.date.isoformat()) for s in computed.trace]
    assert steps == [
        ("start", "2026-12-04"),
        ("counting", "2026-12-04"),
        ("end_of_count", "2026-12-25"),
        ("skipped", "2026-12-25"),
        ("skipped", "2026-12-26"),
        ("skipped", "2026-12-27"),
        ("due", "2026-12-28"),
    ]
    notes = [s.note for s in computed.trace]
    assert "calendar days after the trigger, weekends and legal holidays included" in notes[1]
    assert notes[3].startswith("2026-12-25 Christmas Day (legal holiday)")
    assert notes[4].startswith("2026-12-26 Saturday (weekend)")
    assert "FRCP 12(a)(1)(A)(i)" in notes[-1]


def test_extra_holidays_and_state_holidays_of_a_rule_set() -> None:
    # A day declared a holiday (6(a)(6)(B)), Thu 24 Dec 2026, given in the rule set: 20 days
    # after Fri 4 Dec is Thu 24 Dec (declared), then Christmas, Sat, Sun: Mon 28 Dec 2026.
    declared = CourtCalendar(
        HolidayCalendar.model_validate(
            {"country": "US", "extra_holidays": [{"date": "2026-12-24", "name": "Christmas Eve (declared)"}]}
        )
    )
    computed = compute(rule(20), date(2026, 12, 4), declared)
    assert computed.due_on == date(2026, 12, 28)
    assert "Christmas Eve (declared) (legal holiday)" in computed.trace[3].note
    # California's holidays (a state court, or 6(a)(6)(C)): 21 days after Tue 10 Mar 2026 is
    # Tue 31 Mar, Cesar Chavez Day in California (a working day federally): Wed 1 Apr 2026.
    california = CourtCalendar(HolidayCalendar(country="US", subdivision="CA"))
    assert compute(rule(21), date(2026, 3, 10), california).due_on == date(2026, 4, 1)
    assert compute(rule(21), date(2026, 3, 10), FEDERAL).due_on == date(2026, 3, 31)


def test_the_shipped_rule_set_is_versioned_and_cited() -> None:
    assert FRCP.version == "2026.1"
    answer = next(r for r in FRCP.rules if r.id == "answer")
    assert (answer.trigger, answer.days, answer.counting, answer.direction) == (
        "service",
        21,
        "calendar",
        "after",
    )
    assert answer.citation == "FRCP 12(a)(1)(A)(i)"
    assert all(r.citation for r in FRCP.rules)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"calendar": {"country": "XX"}}, "Unknown country"),
        ({"calendar": {"country": "US", "subdivision": "ZZ"}}, "Unknown subdivision"),
        ({"rules": [*FRCP.model_dump()["rules"], FRCP.model_dump()["rules"][0]]}, "appears twice"),
    ],
)
def test_a_rule_set_is_validated(change: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RuleSetDefinition.model_validate({**FRCP.model_dump(), **change})


def test_rule_set_files_are_checked_when_loaded(tmp_path: Path) -> None:
    text = (RULES_DIR / "frcp.toml").read_text()
    (tmp_path / "frcp.toml").write_text(text)
    assert load_rule_sets(tmp_path)["frcp"] == FRCP
    (tmp_path / "other.toml").write_text(text)  # the id must be the file's name
    with pytest.raises(ValueError, match="file name"):
        load_rule_sets(tmp_path)
    (tmp_path / "other.toml").write_text(
        text.replace('id = "frcp"', 'id = "other"').replace("days = 21", "days = 0", 1)
    )
    with pytest.raises(ValueError, match="greater than or equal to 1"):
        load_rule_sets(tmp_path)
    (tmp_path / "other.toml").write_text("id = ")
    with pytest.raises(tomllib.TOMLDecodeError):
        load_rule_sets(tmp_path)
