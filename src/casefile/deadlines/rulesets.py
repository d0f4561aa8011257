"""Rule sets: what one is (validated the same way whether it comes from a shipped file or from the
firm through the API), the shipped ones in `rules/*.toml`, and the holiday calendar each names."""

from __future__ import annotations

import tomllib
from datetime import date
from functools import cache
from pathlib import Path
from typing import Annotated, Literal

import holidays
from pydantic import Field, WithJsonSchema, field_validator, model_validator

from casefile.schemas import InModel

RULES_DIR = Path(__file__).parent / "rules"
# Ids of rules, triggers and rule sets: short, lower-case, usable in URLs and in webhook payloads.
ID_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"

Counting = Literal["calendar", "court"]
Direction = Literal["after", "before"]


class ExtraHoliday(InModel):
    """A day the courts are closed that the holidays library does not know (a day declared a
    holiday by the President, FRCP 6(a)(6)(B); a court's own closure)."""

    date: date
    name: str = Field(min_length=1, max_length=200)


class HolidayCalendar(InModel):
    """Legal holidays: a country (ISO 3166 code) of the `holidays` library and optionally one of
    its subdivisions (a US state), observed days included, plus days of the rule set's own."""

    country: Annotated[
        str, WithJsonSchema({"type": "string", "enum": sorted(holidays.list_supported_countries())})
    ] = Field(min_length=2, max_length=3)
    subdivision: str | None = Field(default=None, min_length=1, max_length=10)
    extra_holidays: list[ExtraHoliday] = Field(default_factory=list, max_length=500)

    @model_validator(mode="after")
    def _known_to_the_library(self) -> HolidayCalendar:
        supported = holidays.list_supported_countries()
        if self.country not in supported:
            raise ValueError(
                f"Unknown country {self.country!r}: give an ISO 3166 code the holidays library has"
            )
        if self.subdivision is not None and self.subdivision not in supported[self.country]:
            raise ValueError(f"Unknown subdivision {self.subdivision!r} of {self.country}")
        return self


class Rule(InModel):
    id: str = Field(pattern=ID_PATTERN)
    title: str = Field(min_length=1, max_length=300)
    trigger: str = Field(pattern=ID_PATTERN)
    days: int = Field(ge=1, le=3650)
    counting: Counting = "calendar"
    direction: Direction = "after"
    citation: str = Field(min_length=1, max_length=300)


class RuleSetDefinition(InModel):
    id: str = Field(pattern=ID_PATTERN)
    name: str = Field(min_length=1, max_length=200)
    jurisdiction: str = Field(min_length=1, max_length=200)
    version: str = Field(min_length=1, max_length=40)
    source: str = Field(min_length=1, max_length=2000)
    calendar: HolidayCalendar
    rules: list[Rule] = Field(min_length=1, max_length=500)

    @field_validator("rules")
    @classmethod
    def _unique_rule_ids(cls, rules: list[Rule]) -> list[Rule]:
        seen: set[str] = set()
        for rule in rules:
            if rule.id in seen:
                raise ValueError(f"Rule id {rule.id!r} appears twice")
            seen.add(rule.id)
        return rules

    @property
    def triggers(self) -> list[str]:
        return list(dict.fromkeys(rule.trigger for rule in self.rules))


@cache
def shipped_rule_sets() -> dict[str, RuleSetDefinition]:
    """The rule sets in `rules/*.toml`, by id. Read once per process, when the app starts; a broken
    file stops the start (better than computing deadlines from half a rule set)."""
    return load_rule_sets(RULES_DIR)


def load_rule_sets(directory: Path) -> dict[str, RuleSetDefinition]:
    """Every `*.toml` rule set in `directory`, validated, by id (each file is named after its id)."""
    sets: dict[str, RuleSetDefinition] = {}
    for path in sorted(directory.glob("*.toml")):
        with path.open("rb") as file:
            definition = RuleSetDefinition.model_validate(tomllib.load(file))
        if definition.id != path.stem:
            raise ValueError(f"{path.name}: the rule set id must be the file name ({definition.id!r})")
        sets[definition.id] = definition
    return sets
