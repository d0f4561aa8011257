from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Text, func, text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from casefile.clock import new_id, utcnow
from casefile.db import Base, UTCDateTime

if TYPE_CHECKING:
    from casefile.models.users import User


class Case(Base):
    __tablename__ = "cases"

    id: Mapped[str] = mapped_column(String(40), primary_key=True, default=lambda: new_id("case"))
    title: Mapped[str] = mapped_column(String(500))
    # Uniqueness is the database's job (uq_cases_case_number): no check-then-insert race.
    case_number: Mapped[str] = mapped_column(String(100), unique=True)
    case_type: Mapped[str | None] = mapped_column(String(100))
    jurisdiction: Mapped[str | None] = mapped_column(String(100))
    client_name: Mapped[str | None] = mapped_column(String(200))
    description: Mapped[str | None] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(20))
    # "firm" or "restricted" (docs/api-conventions.md#matter-access).
    access: Mapped[str] = mapped_column(String(20), default="firm", server_default="firm")
    priority: Mapped[str] = mapped_column(String(20))
    # A plain id, not a foreign key: the case keeps its history when the user is deleted.
    created_by: Mapped[str | None] = mapped_column(String(40))
    ai: Mapped[dict[str, Any] | None] = mapped_column(JSON)  # the case summary, once summarized
    # The custom fields' values by name (models/custom_fields.py; NULL on rows written before
    # migration 0020 or by an older release: no values).
    custom_fields: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True))
    # Labels of the firm's own (`tag=` filters them); NULL on rows of an older release: none.
    # A missing value is SQL NULL, not JSON `null` (which the `tags=` filter could not unnest).
    tags: Mapped[list[str] | None] = mapped_column(JSON(none_as_null=True))
    # The matter template (and its version) the case was opened from, if any.
    template_id: Mapped[str | None] = mapped_column(String(64))
    template_version: Mapped[int | None] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # In the trash since (docs/api-conventions.md#trash): hidden everywhere, kept until purged.
    deleted_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    deleted_by: Mapped[str | None] = mapped_column(String(40))

    assignees: Mapped[list[CaseAssignee]] = relationship(
        cascade="all, delete-orphan",
        passive_deletes=True,
        order_by="CaseAssignee.assigned_at",
        lazy="selectin",
    )

    # One index per sort key, each ending in id so that ties break by id without a sort step.
    __table_args__ = (
        Index("ix_cases_created_at_id", "created_at", "id"),
        Index("ix_cases_updated_at_id", "updated_at", "id"),
        # Titles sort as people read them, ignoring letter case.
        Index("ix_cases_title_lower_id", func.lower(title), "id"),
        Index("ix_cases_status_created_at", "status", "created_at", "id"),
        # The case_type and jurisdiction filters ignore case: they compare lower().
        Index("ix_cases_case_type_lower_created_at", func.lower(case_type), "created_at", "id"),
        Index("ix_cases_priority_created_at", "priority", "created_at", "id"),
        Index("ix_cases_jurisdiction_lower", func.lower(jurisdiction)),
        # The trash listing and the retention purge read only trashed rows.
        Index("ix_cases_deleted_at", "deleted_at"),
        # A custom-field filter finds case ids in its value index, then checks each is not trashed
        # and reads its sort key: from this index alone (PostgreSQL: an index-only scan), not the
        # table (decision 0025).
        Index(
            "ix_cases_id_live",
            "id",
            "created_at",
            postgresql_where=text("deleted_at IS NULL"),
            sqlite_where=text("deleted_at IS NULL"),
        ),
        # A filtered list read from the custom-field value index (access.matter.visible_ids) leaves
        # out trashed and restricted cases by these ids: a few rows each, not a visit per match.
        Index(
            "ix_cases_trashed_id",
            "id",
            postgresql_where=text("deleted_at IS NOT NULL"),
            sqlite_where=text("deleted_at IS NOT NULL"),
        ),
        Index(
            "ix_cases_restricted_id",
            "id",
            postgresql_where=text("access <> 'firm'"),
            sqlite_where=text("access <> 'firm'"),
        ),
    )

    @property
    def assigned_to(self) -> list[str]:
        return [a.user_id for a in self.assignees]


class CaseAssignee(Base):
    __tablename__ = "case_assignees"

    case_id: Mapped[str] = mapped_column(ForeignKey("cases.id", ondelete="CASCADE"), primary_key=True)
    user_id: Mapped[str] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    assigned_by: Mapped[str | None] = mapped_column(String(40))
    assigned_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    # Loaded with the assignees (one query per page of cases): a case shows its assignees' names
    # (`assignees{id,name}`), not only their ids.
    user: Mapped[User] = relationship(lazy="selectin")

    @property
    def name(self) -> str:
        return self.user.name

    @property
    def email(self) -> str:
        return self.user.email


class CaseNumberCounter(Base):
    """The last automatic case number handed out per year (`YYYY-NNNNNN`)."""

    __tablename__ = "case_number_counters"

    year: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    last_value: Mapped[int] = mapped_column(Integer)


class CaseGrant(Base):
    """Access to a case for a user or a group, at a level (`read`, `write`, `manage`)."""

    __tablename__ = "case_grants"

    case_id: Mapped[str] = mapped_column(ForeignKey("cases.id", ondelete="CASCADE"), primary_key=True)
    subject_type: Mapped[str] = mapped_column(String(10), primary_key=True)  # "user" | "group"
    # No foreign key: the subject is a user or a group; deleting either removes its grants
    # (users.service, groups.service).
    subject_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    level: Mapped[str] = mapped_column(String(10))
    granted_by: Mapped[str | None] = mapped_column(String(40))
    granted_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    # The access check looks grants up by subject ("which cases may this user see").
    __table_args__ = (Index("ix_case_grants_subject", "subject_type", "subject_id", "case_id"),)


class CaseWall(Base):
    """An ethical wall: the user, or every member of the group, has no right at all on the case,
    whatever their role or grants."""

    __tablename__ = "case_walls"

    case_id: Mapped[str] = mapped_column(ForeignKey("cases.id", ondelete="CASCADE"), primary_key=True)
    subject_type: Mapped[str] = mapped_column(String(10), primary_key=True)
    subject_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    reason: Mapped[str | None] = mapped_column(String(1000))
    created_by: Mapped[str | None] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    __table_args__ = (Index("ix_case_walls_subject", "subject_type", "subject_id", "case_id"),)
