from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, String, func
from sqlalchemy.orm import Mapped, mapped_column, relationship

from casefile.clock import new_id, utcnow
from casefile.db import Base, UTCDateTime


class Group(Base):
    """A named set of users, granted access to cases (or walled off from them) as one."""

    __tablename__ = "groups"

    id: Mapped[str] = mapped_column(String(40), primary_key=True, default=lambda: new_id("grp"))
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str | None] = mapped_column(String(2000))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    members: Mapped[list[GroupMember]] = relationship(
        cascade="all, delete-orphan", passive_deletes=True, lazy="selectin", order_by="GroupMember.user_id"
    )

    # Names are unique regardless of case, like e-mail addresses.
    __table_args__ = (Index("uq_groups_name_lower", func.lower(name), unique=True),)

    @property
    def member_ids(self) -> list[str]:
        return [m.user_id for m in self.members]


class GroupMember(Base):
    __tablename__ = "group_members"

    group_id: Mapped[str] = mapped_column(ForeignKey("groups.id", ondelete="CASCADE"), primary_key=True)
    # Indexed by user: the access check asks "which groups is this user in" on every request.
    user_id: Mapped[str] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True, index=True
    )
