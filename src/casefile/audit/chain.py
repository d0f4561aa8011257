"""The hash chain: the canonical form an entry's hash covers, and the check of a whole chain
(docs/api-conventions.md#audit-trail).

An entry's `hash` is the SHA-256 (lower-case hex) of the UTF-8 bytes of its canonical JSON: the
object of every field of the entry as the API shows it, except `hash` itself (so including `seq`
and `prev_hash`), with keys sorted, no whitespace (`","` and `":"` separators) and non-ASCII
characters as themselves (not `\\u` escapes). `prev_hash` is the previous entry's `hash`, or
`GENESIS_HASH` for the first. Anyone holding an export can recompute both.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from casefile.clock import format_timestamp
from casefile.models import AuditEntry

GENESIS_HASH = "0" * 64
HASHED_FIELDS = (
    "id",
    "seq",
    "at",
    "actor_type",
    "actor_id",
    "user_id",
    "action",
    "resource_type",
    "resource_id",
    "case_id",
    "outcome",
    "ip",
    "user_agent",
    "request_id",
    "details",
    "prev_hash",
)


def canonical_json(fields: Mapping[str, Any]) -> bytes:
    body = {name: fields[name] for name in HASHED_FIELDS}
    return json.dumps(
        body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def entry_hash(fields: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical_json(fields)).hexdigest()


def entry_fields(entry: AuditEntry) -> dict[str, Any]:
    """The entry as the API, the export and the hash see it (its hash included)."""
    fields: dict[str, Any] = {name: getattr(entry, name) for name in HASHED_FIELDS}
    fields["at"] = format_timestamp(entry.at)
    fields["hash"] = entry.hash
    return fields


@dataclass(frozen=True)
class ChainBreak:
    """The first entry at which the chain no longer holds, and why."""

    entry_id: str | None
    seq: int | None
    reason: str

    def describe(self) -> str:
        where = f"entry {self.entry_id} (seq {self.seq})" if self.entry_id else "the end of the chain"
        return f"{where}: {self.reason}"


class ChainChecker:
    """Checks entries fed in `seq` order, one at a time (so a chain of any length is checked in
    constant memory); `broken` is the first break found."""

    def __init__(self) -> None:
        self.checked = 0
        self.broken: ChainBreak | None = None
        self._last_seq = 0
        self._last_hash = GENESIS_HASH

    def feed(self, entry: AuditEntry) -> bool:
        """Check the next entry; False once the chain is broken."""
        if self.broken is not None:
            return False
        fields = entry_fields(entry)
        if entry_hash(fields) != entry.hash:
            reason = "its content does not match its hash (the entry was edited or moved)"
        elif entry.prev_hash != self._last_hash:
            reason = (
                "its prev_hash is not the hash of the entry before it "
                "(an entry before it was deleted, or entries were reordered)"
            )
        elif entry.seq != self._last_seq + 1:
            reason = f"entries {self._last_seq + 1} to {entry.seq - 1} are missing (deleted)"
        else:
            self.checked += 1
            self._last_seq, self._last_hash = entry.seq, entry.hash
            return True
        self.broken = ChainBreak(entry.id, entry.seq, reason)
        return False

    def finish(self, head_seq: int, head_hash: str) -> ChainBreak | None:
        """Compare the last entry with the chain head: deleting the newest entries leaves no gap
        inside the chain, only a head that points past its end."""
        if self.broken is None and (head_seq, head_hash) != (self._last_seq, self._last_hash):
            self.broken = ChainBreak(
                None,
                None,
                f"the chain ends at seq {self._last_seq} but its head records seq {head_seq}: "
                "the newest entries were deleted or edited",
            )
        return self.broken
