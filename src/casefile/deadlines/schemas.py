from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, Field

from casefile.deadlines.rulesets import HolidayCalendar, Rule, RuleSetDefinition
from casefile.schemas import InModel, OutModel, Timestamp


class RuleSetOut(BaseModel):
    id: str
    name: str
    jurisdiction: str
    version: str
    source: str
    calendar: HolidayCalendar
    rules: list[Rule]
    origin: Literal["shipped", "firm"] = Field(
        description="shipped: a file of the release; firm: added through POST /deadline-rule-sets"
    )
    triggers: list[str]

    @classmethod
    def of(cls, definition: RuleSetDefinition, origin: Literal["shipped", "firm"]) -> RuleSetOut:
        return cls(**definition.model_dump(), origin=origin, triggers=definition.triggers)


class ComputeRequest(InModel):
    rule_set: str = Field(min_length=1, max_length=64)
    trigger: str = Field(min_length=1, max_length=64)
    trigger_date: date
    save: bool = False
    # Who the saved deadlines' tasks are assigned to; default: the caller (an API key's creator).
    assignee_id: str | None = Field(default=None, min_length=1, max_length=40)


class DeadlineMove(InModel):
    trigger_date: date


class TraceStepOut(BaseModel):
    step: Literal["start", "counting", "end_of_count", "skipped", "due"]
    date: date
    note: str


class ComputedDeadlineOut(BaseModel):
    rule_id: str
    title: str
    citation: str
    days: int
    counting: str
    direction: str
    due_on: date
    trace: list[TraceStepOut]
    task_id: str | None = Field(default=None, description="The task holding this deadline, once saved")


class ComputeOut(BaseModel):
    rule_set: str
    rule_set_version: str
    trigger: str
    trigger_date: date
    deadline_id: str | None = Field(default=None, description="The saved trigger, once saved")
    deadlines: list[ComputedDeadlineOut]


class DeadlineOut(OutModel):
    id: str
    case_id: str
    rule_set: str
    rule_set_version: str
    trigger: str
    trigger_date: date
    created_by: str | None
    created_at: Timestamp
    updated_at: Timestamp
