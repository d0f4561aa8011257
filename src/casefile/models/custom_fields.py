"""Custom fields (docs/api-conventions.md#custom-fields, decision 0025): the firm's own fields on
matters and contacts, grouped in field sets that apply per case type.

A record's values are kept twice, on purpose: whole, as the JSON `custom_fields` of the case or
contact (what every answer, event and backup shows, read with the row), and one typed row per value
in `custom_field_values`, the index that `cf.<name>=` filters and `sort=cf.<name>` sorts use on
both databases ((field_id, value_text) and (field_id, value_number) b-trees, each carrying the case's
created_at: the list's default sort key)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, Float, ForeignKey, Index, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from casefile.clock import new_id, utcnow
from casefile.db import Base, UTCDateTime


class CustomFieldSet(Base):
    """Fields shown together, applying to the case types listed (none listed: every case)."""

    __tablename__ = "custom_field_sets"

    id: Mapped[str] = mapped_column(String(40), primary_key=True, default=lambda: new_id("cfs"))
    entity: Mapped[str] = mapped_column(String(20))  # "case" | "contact"
    name: Mapped[str] = mapped_column(String(200))
    # Lower-cased (a case's type is matched ignoring case, as the case_type filter does).
    case_types: Mapped[list[str]] = mapped_column(JSON, default=list)
    position: Mapped[int] = mapped_column(Integer, default=0)
    created_by: Mapped[str | None] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class CustomField(Base):
    """One field's definition. `entity`, `name` and `field_type` never change once made: stored
    values and API callers depend on them."""

    __tablename__ = "custom_fields"

    id: Mapped[str] = mapped_column(String(40), primary_key=True, default=lambda: new_id("cf"))
    entity: Mapped[str] = mapped_column(String(20))
    name: Mapped[str] = mapped_column(String(64))
    label: Mapped[str] = mapped_column(String(200))
    field_type: Mapped[str] = mapped_column(String(20))
    required: Mapped[bool] = mapped_column(Boolean, default=False)
    # Statuses a case may only move to with a value in this field (e.g. ["closed"]).
    required_for_statuses: Mapped[list[str]] = mapped_column(JSON, default=list)
    default: Mapped[Any] = mapped_column(JSON, nullable=True)
    choices: Mapped[list[str]] = mapped_column(JSON, default=list)
    field_set_id: Mapped[str | None] = mapped_column(
        ForeignKey("custom_field_sets.id", ondelete="SET NULL"), index=True
    )
    position: Mapped[int] = mapped_column(Integer, default=0)
    created_by: Mapped[str | None] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    __table_args__ = (UniqueConstraint("entity", "name", name="uq_custom_fields_entity_name"),)


class CustomFieldValue(Base):
    """One value of one field of one case or contact (a multiple choice has a row per choice):
    the index of filters and sorts. Text is kept lower-cased (filters and sorts ignore case, as
    they do on titles), dates as ISO text (which sorts as dates), booleans as `true`/`false`,
    numbers and decimals in `value_number`; long text is not indexed (shown and searched only)."""

    __tablename__ = "custom_field_values"

    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    )
    field_id: Mapped[str] = mapped_column(ForeignKey("custom_fields.id", ondelete="CASCADE"))
    case_id: Mapped[str | None] = mapped_column(ForeignKey("cases.id", ondelete="CASCADE"), index=True)
    contact_id: Mapped[str | None] = mapped_column(ForeignKey("contacts.id", ondelete="CASCADE"), index=True)
    value_text: Mapped[str | None] = mapped_column(String(1000))
    value_number: Mapped[float | None] = mapped_column(Float)
    # A case's value: the case's created_at (which never changes), written with the value. A
    # filtered list in its default order then finds, counts and orders its matches from the value
    # index alone, without reading each matching case (migration 0026; NULL on contacts' values).
    case_created_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    # A filter reads one field's matching values, their records and sort keys from the index alone.
    __table_args__ = (
        Index("ix_custom_field_values_text_created", "field_id", "value_text", "case_created_at", "case_id"),
        Index(
            "ix_custom_field_values_number_created", "field_id", "value_number", "case_created_at", "case_id"
        ),
        Index("ix_custom_field_values_contact_text", "field_id", "value_text", "contact_id"),
    )
