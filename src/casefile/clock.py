"""Time and identifiers: UTC timestamps with a `Z` suffix, prefixed time-ordered ids."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache
from zoneinfo import available_timezones

from ulid import ULID


def utcnow() -> datetime:
    return datetime.now(UTC)


@cache
def time_zones() -> frozenset[str]:
    """The IANA time zone names this installation knows (`tzdata`)."""
    return frozenset(available_timezones())


def format_timestamp(value: datetime) -> str:
    """ISO 8601 UTC with millisecond precision, so that the strings also sort in time order."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    # isoformat is C and truncates to the millisecond like the formatting it replaced, at a
    # fifth of the cost (every timestamp of every answer and audit entry goes through here).
    return value.astimezone(UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


def new_id(prefix: str) -> str:
    """`<prefix>_<ULID>`: opaque, unique, and sortable by creation time."""
    return f"{prefix}_{str(ULID()).lower()}"
