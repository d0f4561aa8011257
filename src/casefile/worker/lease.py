"""Rows that workers claim with a lease: webhook deliveries and AI jobs.

A worker claims a due row in one short transaction (`FOR UPDATE SKIP LOCKED` on PostgreSQL;
SQLite's write transactions are exclusive): it counts the attempt, bumps the row's fencing token
and leases the row for longer than the attempt can last. The slow work then runs with no
transaction open, and its outcome is recorded only while the row still holds that claim's token
(`Leased.held_by`), so a late finisher whose lease was taken over changes nothing. A worker that
dies mid-attempt loses nothing: its lease runs out and the row is due again (`Leased.due`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar, TypedDict

from sqlalchemy import ColumnElement, Index, Integer, String, Update, and_, or_, text, update
from sqlalchemy.orm import Mapped, mapped_column

from casefile.clock import utcnow
from casefile.db import UTCDateTime

JITTER = 0.2


class Leased:
    """The six lease columns, for a declarative model (`class Delivery(Leased, Base)`).

    `CLAIMABLE` names the statuses in which a due row may be claimed; its model's partial index
    on `next_attempt_at` (`due_index`) is limited to the same statuses."""

    CLAIMABLE: ClassVar[tuple[str, ...]]

    if TYPE_CHECKING:  # every leased model has a string primary key named `id`
        id: Mapped[str]

    status: Mapped[str] = mapped_column(String(20), default="pending")
    attempts_made: Mapped[int] = mapped_column(Integer, default=0)
    max_attempts: Mapped[int] = mapped_column(Integer)
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    lease_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # The fencing token: bumped by every claim.
    lease_token: Mapped[int] = mapped_column(Integer, default=0)

    @classmethod
    def due(cls, now: datetime) -> ColumnElement[bool]:
        """Claimable at `now`: waiting and due, and not leased, or leased by a worker whose lease
        ran out (it died: the row is taken over)."""
        return and_(
            cls.status.in_(cls.CLAIMABLE),
            cls.next_attempt_at <= now,
            or_(cls.lease_expires_at.is_(None), cls.lease_expires_at < now),
        )

    @classmethod
    def held_by(cls, row_id: Any, lease_token: Any) -> ColumnElement[bool]:
        """The row `row_id`, only while its lease is still the claim's with `lease_token` (fencing).
        Either may be a value or a `bindparam`."""
        return and_(cls.id == row_id, cls.lease_token == lease_token)

    def take_lease(self, now: datetime, seconds: float) -> LeaseTerms:
        """Claim the row: count the attempt, bump the fencing token and lease it for `seconds`.
        Returns what the claim carries of its lease."""
        self.attempts_made += 1
        self.lease_token += 1
        self.lease_expires_at = now + timedelta(seconds=seconds)
        return {
            "lease_token": self.lease_token,
            "attempt": self.attempts_made,
            "max_attempts": self.max_attempts,
        }

    @classmethod
    def take_leases(cls, row_ids: list[str], now: datetime, seconds: float) -> Update:
        """`take_lease` for many rows in one statement, for a claim that reads columns rather than
        objects. The caller has locked the rows (`FOR UPDATE`), so it knows each row's counters
        before the statement: `leased_terms` gives what each claim then carries."""
        return (
            update(cls)
            .where(cls.id.in_(row_ids))
            .values(
                attempts_made=cls.attempts_made + 1,
                lease_token=cls.lease_token + 1,
                lease_expires_at=now + timedelta(seconds=seconds),
            )
            .execution_options(synchronize_session=False)
        )


def leased_terms(*, attempts_made: int, lease_token: int, max_attempts: int) -> LeaseTerms:
    """What a claim carries of a row that `Leased.take_leases` leased, from the row's counters as
    they were read (locked) before it."""
    return {"lease_token": lease_token + 1, "attempt": attempts_made + 1, "max_attempts": max_attempts}


class LeaseTerms(TypedDict):
    lease_token: int
    attempt: int
    max_attempts: int


@dataclass(frozen=True, kw_only=True)
class LeaseClaim:
    """What a claim holds of its row's lease: the fencing token its outcome must still match, and
    which attempt, of how many, it is."""

    lease_token: int
    attempt: int
    max_attempts: int


def due_index(name: str, statuses: tuple[str, ...]) -> Index:
    """The claim's index: due rows, oldest first. Partial, so finished rows cost it nothing."""
    where = text("status IN ({})".format(", ".join(f"'{status}'" for status in statuses)))
    return Index(name, "next_attempt_at", postgresql_where=where, sqlite_where=where)


def backoff_seconds(attempt: int, *, initial: float, multiplier: float, cap: float | None = None) -> float:
    """Seconds before attempt `attempt + 1`: exponential from `initial`, ±20 % jitter (so rows that
    failed together do not come back together), at most `cap`."""
    delay = initial * multiplier ** (attempt - 1) * random.uniform(1 - JITTER, 1 + JITTER)  # noqa: S311 (not crypto)
    return float(delay if cap is None else min(delay, cap))
