from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import JSON, Date, ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from casefile.clock import new_id, utcnow
from casefile.db import Base, UTCDateTime


class DeadlineRuleSet(Base):
    """A rule set the firm added through the API (the shipped ones are files, never rows)."""

    __tablename__ = "deadline_rule_sets"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    # The validated definition, as `RuleSetDefinition` dumps it.
    definition: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_by: Mapped[str | None] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Deadline(Base):
    """Deadlines saved on a case: one trigger (rule set, trigger, date) whose computed deadlines are
    tasks (`tasks.deadline_id`). Moving `trigger_date` moves those tasks. One per case, rule set and
    trigger: saving the same trigger again moves it rather than doubling every task."""

    __tablename__ = "deadlines"

    id: Mapped[str] = mapped_column(String(40), primary_key=True, default=lambda: new_id("dl"))
    case_id: Mapped[str] = mapped_column(ForeignKey("cases.id", ondelete="CASCADE"))
    rule_set: Mapped[str] = mapped_column(String(64))
    rule_set_version: Mapped[str] = mapped_column(String(40))
    trigger: Mapped[str] = mapped_column(String(64))
    trigger_date: Mapped[date] = mapped_column(Date)
    created_by: Mapped[str | None] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    __table_args__ = (UniqueConstraint("case_id", "rule_set", "trigger", name="uq_deadlines_case_trigger"),)
