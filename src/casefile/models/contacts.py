from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Date,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    func,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from casefile.clock import new_id, utcnow
from casefile.db import Base, UTCDateTime


class Contact(Base):
    """A person or organisation the firm deals with: clients, adverse parties, counsel, witnesses."""

    __tablename__ = "contacts"

    id: Mapped[str] = mapped_column(String(40), primary_key=True, default=lambda: new_id("con"))
    kind: Mapped[str] = mapped_column(String(20))
    name: Mapped[str] = mapped_column(String(300))
    aliases: Mapped[list[str]] = mapped_column(JSON, default=list)
    emails: Mapped[list[str]] = mapped_column(JSON, default=list)
    phones: Mapped[list[str]] = mapped_column(JSON, default=list)
    addresses: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    identifiers: Mapped[dict[str, str]] = mapped_column(JSON, default=dict)
    tags: Mapped[list[str]] = mapped_column(JSON, default=list)
    notes: Mapped[str | None] = mapped_column(Text)
    # The custom fields' values by name (models/custom_fields.py; NULL on rows written before
    # migration 0020 or by an older release: no values).
    custom_fields: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True))
    created_by: Mapped[str | None] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    names: Mapped[list[ContactName]] = relationship(
        cascade="all, delete-orphan", passive_deletes=True, order_by="ContactName.id", lazy="selectin"
    )

    __table_args__ = (
        Index("ix_contacts_created_at_id", "created_at", "id"),
        Index("ix_contacts_updated_at_id", "updated_at", "id"),
        Index("ix_contacts_name_lower_id", func.lower(name), "id"),
        Index("ix_contacts_kind_created_at", "kind", "created_at", "id"),
    )


class ContactName(Base):
    """One name a contact goes by (its name, or one of its aliases) with its matching key
    (`casefile.nlp.name_keys`): what conflict checks compare and contact search looks in. Kept by
    the contact rules whenever the name or aliases change, never written by hand."""

    __tablename__ = "contact_names"
    __table_args__ = (
        # The conflict check reads (length, key) for a window of lengths: a covering index.
        Index("ix_contact_names_key_length_key", "key_length", "key"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    )
    contact_id: Mapped[str] = mapped_column(ForeignKey("contacts.id", ondelete="CASCADE"), index=True)
    source: Mapped[str] = mapped_column(String(10))  # "contact" (its name) or "alias"
    name: Mapped[str] = mapped_column(String(300))
    key: Mapped[str] = mapped_column(String(300), index=True)
    key_length: Mapped[int] = mapped_column(Integer)


class Party(Base):
    """A contact's part in a case: client, adverse party, counsel, witness…"""

    __tablename__ = "parties"

    id: Mapped[str] = mapped_column(String(40), primary_key=True, default=lambda: new_id("pty"))
    case_id: Mapped[str] = mapped_column(ForeignKey("cases.id", ondelete="CASCADE"))
    # RESTRICT: a contact who is a party of a case stays (the matter's record), see contacts.service.
    contact_id: Mapped[str] = mapped_column(ForeignKey("contacts.id", ondelete="RESTRICT"), index=True)
    role: Mapped[str] = mapped_column(String(40))
    starts_on: Mapped[date | None] = mapped_column(Date)
    ends_on: Mapped[date | None] = mapped_column(Date)
    # The check run when an adverse party was added (a plain id, like created_by).
    conflict_check_id: Mapped[str | None] = mapped_column(String(40))
    created_by: Mapped[str | None] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    contact: Mapped[Contact] = relationship(lazy="selectin")

    __table_args__ = (
        UniqueConstraint("case_id", "contact_id", "role"),
        Index("ix_parties_case_id_created_at", "case_id", "created_at", "id"),
    )

    @property
    def contact_name(self) -> str:
        return self.contact.name

    @property
    def contact_kind(self) -> str:
        return self.contact.kind
