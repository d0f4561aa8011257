from __future__ import annotations

from datetime import date
from typing import Any, Literal

from pydantic import Field, model_validator

from casefile.cases.schemas import MAX_TAGS, Access, CaseCreate, Priority, Status, Tag
from casefile.contacts.schemas import Role
from casefile.deadlines.rulesets import ID_PATTERN
from casefile.schemas import InModel, OutModel, Timestamp

MAX_ITEMS = 100


class CaseDefaults(InModel):
    """The case fields a template fills in when the request does not (each matter has its own
    title: the request gives it)."""

    jurisdiction: str | None = Field(default=None, min_length=1, max_length=100)
    description: str | None = Field(default=None, max_length=20_000)
    status: Status | None = None
    priority: Priority | None = None
    access: Access | None = None


class TemplateParty(InModel):
    """An existing contact added in a role (the court, co-counsel, an insurer)."""

    role: Role
    contact_id: str = Field(min_length=1, max_length=40)


class TemplateDeadline(InModel):
    """A trigger of a rule set to compute and save; its date is the opening date
    (`on_opening`) or `trigger_dates[trigger]` of the request."""

    rule_set: str = Field(min_length=1, max_length=64)
    trigger: str = Field(min_length=1, max_length=64)
    on_opening: bool = False


class TemplateTask(InModel):
    title: str = Field(min_length=1, max_length=500)
    description: str | None = Field(default=None, max_length=20_000)
    priority: Priority = "medium"
    # Days after (or before, negative) the opening date, or a deadline trigger's date.
    due_in_days: int | None = Field(default=None, ge=-3650, le=3650)
    relative_to: Literal["opening", "trigger"] = "opening"
    trigger: str | None = Field(default=None, min_length=1, max_length=64)
    # `creator`: whoever opens the matter; else a user id, or nobody.
    assignee: str | None = Field(default="creator", min_length=1, max_length=40)

    @model_validator(mode="after")
    def _trigger_named(self) -> TemplateTask:
        if self.relative_to == "trigger" and (self.trigger is None or self.due_in_days is None):
            raise ValueError("A task relative to a trigger names the trigger and due_in_days")
        return self


class TemplateBody(InModel):
    """A version of a template (`PUT` makes the next one)."""

    name: str = Field(min_length=1, max_length=200)
    description: str | None = Field(default=None, max_length=2000)
    case_type: str | None = Field(default=None, min_length=1, max_length=100)
    defaults: CaseDefaults = Field(default_factory=CaseDefaults)
    custom_fields: dict[str, Any] = Field(default_factory=dict, max_length=200)
    parties: list[TemplateParty] = Field(default_factory=list, max_length=MAX_ITEMS)
    deadlines: list[TemplateDeadline] = Field(default_factory=list, max_length=20)
    tasks: list[TemplateTask] = Field(default_factory=list, max_length=MAX_ITEMS)
    tags: list[Tag] = Field(default_factory=list, max_length=MAX_TAGS)
    # Documents (of any case: a firm keeps its standard forms somewhere) copied into each new case.
    documents: list[str] = Field(default_factory=list, max_length=MAX_ITEMS)

    @model_validator(mode="after")
    def _triggers_known(self) -> TemplateBody:
        triggers = {d.trigger for d in self.deadlines}
        for task in self.tasks:
            if task.relative_to == "trigger" and task.trigger not in triggers:
                raise ValueError(
                    f"Task {task.title!r} is relative to {task.trigger!r}, not a deadline of the template"
                )
        return self


class TemplateCreate(TemplateBody):
    id: str = Field(pattern=ID_PATTERN)


class TemplateOut(OutModel):
    id: str
    version: int
    created_by: str | None
    created_at: Timestamp
    definition: TemplateBody


class CaseOpen(CaseCreate):
    """`POST /cases`: a case, optionally from a matter template (its latest version unless
    `template_version`); what the request gives wins over the template's defaults."""

    template_id: str | None = Field(default=None, pattern=ID_PATTERN)
    template_version: int | None = Field(default=None, ge=1, le=2**31 - 1)  # an INTEGER column
    # The dates of the template's deadline triggers that are not on the opening date.
    trigger_dates: dict[str, date] = Field(default_factory=dict, max_length=20)
