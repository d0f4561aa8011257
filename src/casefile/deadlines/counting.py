"""The counting engine: one rule applied to one trigger date, with every step written down.

Counting follows FRCP 6(a)(1), which most US courts share:
- calendar days: exclude the trigger day, count every day (weekends and legal holidays too),
  include the last day; if the last day is a Saturday, Sunday or legal holiday, the period runs
  on to the next day that is none of these (6(a)(1)(C));
- court days: count only days that are not a Saturday, Sunday or legal holiday, so the last day
  counted is always one the court is open;
- "before" an event, counting runs backward, and a closed last day moves to the previous open day
  (6(a)(5): the "next day" is found by continuing to count in the direction of the count).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Literal

import holidays

from casefile.deadlines.rulesets import HolidayCalendar, Rule

WEEKEND = {5: "Saturday", 6: "Sunday"}


@dataclass(frozen=True)
class TraceStep:
    step: Literal["start", "counting", "end_of_count", "skipped", "due"]
    date: date
    note: str


@dataclass(frozen=True)
class Computed:
    rule: Rule
    due_on: date
    trace: list[TraceStep]


class CourtCalendar:
    """Which days a court is closed, and why."""

    def __init__(self, calendar: HolidayCalendar) -> None:
        self._holidays = holidays.country_holidays(
            calendar.country, subdiv=calendar.subdivision, observed=True
        )
        self._extra = {extra.date: extra.name for extra in calendar.extra_holidays}

    def closed_because(self, day: date) -> str | None:
        """Why the court is closed on `day` (the holiday's name first: a holiday on a Saturday is
        reported as the holiday), or None when it is open."""
        name = self._extra.get(day) or self._holidays.get(day)
        if name:
            return f"{name} (legal holiday)"
        weekday = WEEKEND.get(day.weekday())
        return f"{weekday} (weekend)" if weekday else None


def _describe(day: date) -> str:
    return f"{day.isoformat()} ({day.strftime('%A')})"


def compute(rule: Rule, trigger_date: date, court: CourtCalendar) -> Computed:
    step = timedelta(days=1 if rule.direction == "after" else -1)
    unit = "calendar day" if rule.counting == "calendar" else "court day"
    units = unit if rule.days == 1 else f"{unit}s"
    trace = [
        TraceStep(
            "start",
            trigger_date,
            f"Trigger '{rule.trigger}' on {_describe(trigger_date)}; that day is not counted",
        ),
    ]
    if rule.counting == "calendar":
        trace.append(
            TraceStep(
                "counting",
                trigger_date,
                f"Count {rule.days} {units} {rule.direction} the trigger,"
                " weekends and legal holidays included",
            )
        )
        day = trigger_date + step * rule.days
        trace.append(TraceStep("end_of_count", day, f"Day {rule.days} is {_describe(day)}"))
        reason = court.closed_because(day)
        while reason is not None:
            onward = "next" if rule.direction == "after" else "previous"
            trace.append(
                TraceStep("skipped", day, f"{day.isoformat()} {reason}: the period runs to the {onward} day")
            )
            day += step
            reason = court.closed_because(day)
    else:
        trace.append(
            TraceStep(
                "counting",
                trigger_date,
                f"Count {rule.days} {units} {rule.direction} the trigger,"
                " skipping weekends and legal holidays",
            )
        )
        day, counted = trigger_date, 0
        while counted < rule.days:
            day += step
            reason = court.closed_because(day)
            if reason is None:
                counted += 1
            else:
                trace.append(TraceStep("skipped", day, f"{day.isoformat()} {reason}: not counted"))
        trace.append(TraceStep("end_of_count", day, f"Court day {rule.days} is {_describe(day)}"))
    trace.append(TraceStep("due", day, f"Due {_describe(day)} ({rule.citation})"))
    return Computed(rule=rule, due_on=day, trace=trace)
