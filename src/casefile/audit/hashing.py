"""An entry's hash: the canonical form it covers (docs/api-conventions.md#audit-trail).

`hash` is the SHA-256 (lower-case hex) of the UTF-8 bytes of the entry's canonical JSON: an object
of the fields named below, exactly as the API shows them, keys sorted at every level, no
whitespace (`","` and `":"` separators) and non-ASCII characters as themselves (not `\\u`
escapes). Anyone holding an entry (the API, an export) can recompute it.

Two rules, by where an entry stands in the log:
- the content rule (`CONTENT_FIELDS`): every entry written since the log exists. The request that
  writes an entry hashes it at once; its position (`seq`) and link (`prev_hash`) are not covered,
  since only the sequencer gives them later. The Merkle tree commits to the position.
- the chained rule (`CHAINED_FIELDS`, the content and `seq` and `prev_hash`): the entries of the
  hash chain that came before the log (positions 1 to the log's `legacy_size`), hashed under the
  chain head's lock as they were appended (migration 0017 kept them as they were); and the entries
  a process of the previous release wrote during a rolling upgrade, with the `seq` and
  `prev_hash` it chained them with, kept as `chained_seq` and `chained_prev_hash`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from casefile.clock import format_timestamp
from casefile.models import PREVIOUS_RELEASE_SEQ_BASE, AuditEntry

GENESIS_HASH = "0" * 64
CONTENT_FIELDS = (
    "id",
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
)
CHAINED_FIELDS = (*CONTENT_FIELDS, "seq", "prev_hash")
# Every field an entry shows, in the order of an export's columns.
ENTRY_FIELDS = ("id", "seq", *CONTENT_FIELDS[1:], "prev_hash", "hash", "chained_seq", "chained_prev_hash")


def canonical_json(fields: Mapping[str, Any], names: tuple[str, ...] = CONTENT_FIELDS) -> bytes:
    body = {name: fields[name] for name in names}
    return json.dumps(
        body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def content_hash(fields: Mapping[str, Any]) -> str:
    """The hash of an entry under the content rule (`at` already as the API shows it)."""
    return hashlib.sha256(canonical_json(fields)).hexdigest()


def chained_hash(fields: Mapping[str, Any]) -> str:
    """The hash of an entry of the hash chain that came before the log."""
    return hashlib.sha256(canonical_json(fields, CHAINED_FIELDS)).hexdigest()


def expected_hash(fields: Mapping[str, Any], *, legacy: bool) -> str:
    """The hash `fields` (`entry_fields`) should have: `legacy` for the chain before the log."""
    if fields["chained_seq"] is not None:  # written by a previous release's process
        return chained_hash(
            {**fields, "seq": fields["chained_seq"], "prev_hash": fields["chained_prev_hash"]}
        )
    return chained_hash(fields) if legacy else content_hash(fields)


def entry_fields(entry: AuditEntry) -> dict[str, Any]:
    """The entry as the API, the export and the hash see it."""
    fields: dict[str, Any] = {name: getattr(entry, name) for name in ENTRY_FIELDS}
    fields["at"] = format_timestamp(entry.at)
    if entry.seq is not None and entry.seq >= PREVIOUS_RELEASE_SEQ_BASE:  # the old chain's, not placed yet
        fields["seq"] = fields["prev_hash"] = None
    fields["sequenced"] = fields["seq"] is not None
    return fields
