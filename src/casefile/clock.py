"""Time and identifiers: UTC timestamps with a `Z` suffix, prefixed time-ordered ids."""

from __future__ import annotations

from datetime import UTC, datetime

from ulid import ULID


def utcnow() -> datetime:
    return datetime.now(UTC)


def format_timestamp(value: datetime) -> str:
    """ISO 8601 UTC with millisecond precision, so that the strings also sort in time order."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


def new_id(prefix: str) -> str:
    """`<prefix>_<ULID>`: opaque, unique, and sortable by creation time."""
    return f"{prefix}_{str(ULID()).lower()}"
