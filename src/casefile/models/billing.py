"""Time, expenses, rates and invoices (docs/billing.md). Amounts are integer minor units with
their ISO 4217 currency beside them (`casefile.money`)."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import BigInteger, Boolean, Date, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from casefile.clock import new_id, utcnow
from casefile.db import Base, UTCDateTime

ENTRY_STATES = ("draft", "ready", "billed")
INVOICE_STATES = ("draft", "approved", "sent", "paid", "void")


class BillingRate(Base):
    """A user's hourly rate: their default (no client, no case), for one client, or for one case."""

    __tablename__ = "billing_rates"
    __table_args__ = (UniqueConstraint("user_id", "contact_id", "case_id", name="uq_billing_rates_scope"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True, default=lambda: new_id("rate"))
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    contact_id: Mapped[str | None] = mapped_column(ForeignKey("contacts.id", ondelete="CASCADE"))
    case_id: Mapped[str | None] = mapped_column(ForeignKey("cases.id", ondelete="CASCADE"))
    rate_minor: Mapped[int] = mapped_column(BigInteger)
    currency: Mapped[str] = mapped_column(String(3))
    updated_by: Mapped[str | None] = mapped_column(String(40))
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class TimeEntry(Base):
    __tablename__ = "time_entries"
    __table_args__ = (
        Index("ix_time_entries_case_id_work_date", "case_id", "work_date", "id"),
        Index("ix_time_entries_user_id_work_date", "user_id", "work_date", "id"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True, default=lambda: new_id("time"))
    case_id: Mapped[str] = mapped_column(ForeignKey("cases.id", ondelete="CASCADE"))
    user_id: Mapped[str] = mapped_column(String(40))
    work_date: Mapped[date] = mapped_column(Date)
    seconds: Mapped[int] = mapped_column(Integer)  # as worked
    billed_seconds: Mapped[int] = mapped_column(Integer)  # rounded up to the firm's increment
    increment_seconds: Mapped[int] = mapped_column(Integer)
    description: Mapped[str] = mapped_column(Text)
    billable: Mapped[bool] = mapped_column(Boolean, default=True)
    rate_minor: Mapped[int] = mapped_column(BigInteger)  # frozen when the entry is made
    rate_source: Mapped[str] = mapped_column(String(10))  # user | client | matter | none
    amount_minor: Mapped[int] = mapped_column(BigInteger)
    currency: Mapped[str] = mapped_column(String(3))
    task_code: Mapped[str | None] = mapped_column(String(10))
    activity_code: Mapped[str | None] = mapped_column(String(10))
    state: Mapped[str] = mapped_column(String(10), default="draft")
    invoice_id: Mapped[str | None] = mapped_column(String(40), index=True)
    created_by: Mapped[str | None] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Timer(Base):
    """A running or paused stopwatch, kept in the database so that it survives a restart: the
    elapsed time is `accumulated_seconds` plus, while running, now - `running_since`."""

    __tablename__ = "timers"

    id: Mapped[str] = mapped_column(String(40), primary_key=True, default=lambda: new_id("tmr"))
    user_id: Mapped[str] = mapped_column(String(40), index=True)
    case_id: Mapped[str] = mapped_column(ForeignKey("cases.id", ondelete="CASCADE"))
    description: Mapped[str] = mapped_column(Text, default="")
    accumulated_seconds: Mapped[int] = mapped_column(Integer, default=0)
    running_since: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Expense(Base):
    __tablename__ = "expenses"
    __table_args__ = (Index("ix_expenses_case_id_spent_on", "case_id", "spent_on", "id"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True, default=lambda: new_id("exp"))
    case_id: Mapped[str] = mapped_column(ForeignKey("cases.id", ondelete="CASCADE"))
    user_id: Mapped[str | None] = mapped_column(String(40))
    spent_on: Mapped[date] = mapped_column(Date)
    amount_minor: Mapped[int] = mapped_column(BigInteger)
    currency: Mapped[str] = mapped_column(String(3))
    category: Mapped[str] = mapped_column(String(100))
    description: Mapped[str] = mapped_column(Text, default="")
    expense_code: Mapped[str | None] = mapped_column(String(10))
    receipt_document_id: Mapped[str | None] = mapped_column(ForeignKey("documents.id", ondelete="SET NULL"))
    billable: Mapped[bool] = mapped_column(Boolean, default=True)
    state: Mapped[str] = mapped_column(String(10), default="draft")
    invoice_id: Mapped[str | None] = mapped_column(String(40), index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Invoice(Base):
    __tablename__ = "invoices"

    id: Mapped[str] = mapped_column(String(40), primary_key=True, default=lambda: new_id("inv"))
    case_id: Mapped[str] = mapped_column(ForeignKey("cases.id", ondelete="CASCADE"), index=True)
    number: Mapped[str | None] = mapped_column(String(40), unique=True)  # given at approval
    state: Mapped[str] = mapped_column(String(10), default="draft")
    currency: Mapped[str] = mapped_column(String(3))
    period_start: Mapped[date] = mapped_column(Date)
    period_end: Mapped[date] = mapped_column(Date)
    discount_percent: Mapped[str] = mapped_column(String(12), default="0")  # a Decimal, exactly
    tax_percent: Mapped[str] = mapped_column(String(12), default="0")
    subtotal_minor: Mapped[int] = mapped_column(BigInteger, default=0)
    discount_minor: Mapped[int] = mapped_column(BigInteger, default=0)
    write_off_minor: Mapped[int] = mapped_column(BigInteger, default=0)
    tax_minor: Mapped[int] = mapped_column(BigInteger, default=0)
    total_minor: Mapped[int] = mapped_column(BigInteger, default=0)
    paid_minor: Mapped[int] = mapped_column(BigInteger, default=0)
    issued_on: Mapped[date | None] = mapped_column(Date)
    due_on: Mapped[date | None] = mapped_column(Date)
    created_by: Mapped[str | None] = mapped_column(String(40))
    approved_by: Mapped[str | None] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class InvoiceLine(Base):
    __tablename__ = "invoice_lines"
    __table_args__ = (UniqueConstraint("invoice_id", "position"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True, default=lambda: new_id("line"))
    invoice_id: Mapped[str] = mapped_column(ForeignKey("invoices.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(10))  # fee | expense
    source_id: Mapped[str] = mapped_column(String(40))  # the time entry or expense
    work_date: Mapped[date] = mapped_column(Date)
    description: Mapped[str] = mapped_column(Text)
    user_id: Mapped[str | None] = mapped_column(String(40))
    units: Mapped[str] = mapped_column(String(20))  # hours (fees) or 1 (expenses), a Decimal
    unit_cost_minor: Mapped[int] = mapped_column(BigInteger)
    amount_minor: Mapped[int] = mapped_column(BigInteger)
    discount_minor: Mapped[int] = mapped_column(BigInteger, default=0)
    write_off_minor: Mapped[int] = mapped_column(BigInteger, default=0)
    task_code: Mapped[str | None] = mapped_column(String(10))
    activity_code: Mapped[str | None] = mapped_column(String(10))
    expense_code: Mapped[str | None] = mapped_column(String(10))


class InvoicePayment(Base):
    __tablename__ = "invoice_payments"

    id: Mapped[str] = mapped_column(String(40), primary_key=True, default=lambda: new_id("pay"))
    invoice_id: Mapped[str] = mapped_column(ForeignKey("invoices.id", ondelete="CASCADE"), index=True)
    amount_minor: Mapped[int] = mapped_column(BigInteger)
    currency: Mapped[str] = mapped_column(String(3))
    paid_on: Mapped[date] = mapped_column(Date)
    method: Mapped[str] = mapped_column(String(20))  # bank | card | cash | check | trust
    reference: Mapped[str] = mapped_column(String(200), default="")
    trust_entry_id: Mapped[str | None] = mapped_column(String(40))
    recorded_by: Mapped[str | None] = mapped_column(String(40))
    recorded_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class InvoiceCounter(Base):
    """The firm's last invoice number: one row, locked by the approval that takes the next number,
    so numbers have no gaps and no duplicates however many approvals run at once."""

    __tablename__ = "invoice_counters"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    last_value: Mapped[int] = mapped_column(Integer)
