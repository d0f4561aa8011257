"""The trust (client money) ledger: an append-only journal and a balance row per matter and currency
(docs/billing.md#trust-money)."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import BigInteger, CheckConstraint, Date, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from casefile.clock import new_id, utcnow
from casefile.db import Base, UTCDateTime

TRUST_KINDS = ("deposit", "withdrawal", "transfer", "reversal")


class TrustEntry(Base):
    """One movement of client money, never changed or deleted: a mistake is answered by a
    `reversal` entry naming it. `amount_minor` is signed (deposits positive)."""

    __tablename__ = "trust_entries"
    __table_args__ = (Index("ix_trust_entries_case_id_entry_date", "case_id", "entry_date", "id"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True, default=lambda: new_id("trx"))
    case_id: Mapped[str] = mapped_column(ForeignKey("cases.id", ondelete="RESTRICT"))
    contact_id: Mapped[str | None] = mapped_column(String(40), index=True)  # the client
    kind: Mapped[str] = mapped_column(String(12))
    amount_minor: Mapped[int] = mapped_column(BigInteger)
    currency: Mapped[str] = mapped_column(String(3))
    entry_date: Mapped[date] = mapped_column(Date)
    reference: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    invoice_id: Mapped[str | None] = mapped_column(String(40))
    reverses_id: Mapped[str | None] = mapped_column(String(40), unique=True)
    balance_after_minor: Mapped[int] = mapped_column(BigInteger)
    recorded_by: Mapped[str | None] = mapped_column(String(40))
    recorded_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class TrustBalance(Base):
    """A matter's trust balance in one currency: the row every movement locks first, and a
    CHECK that it never goes below zero as the last line of defence."""

    __tablename__ = "trust_balances"
    __table_args__ = (CheckConstraint("balance_minor >= 0", name="not_negative"),)

    case_id: Mapped[str] = mapped_column(ForeignKey("cases.id", ondelete="RESTRICT"), primary_key=True)
    currency: Mapped[str] = mapped_column(String(3), primary_key=True)
    balance_minor: Mapped[int] = mapped_column(BigInteger, default=0)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
