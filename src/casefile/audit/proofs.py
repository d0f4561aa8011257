"""What the log's API answers (docs/api-conventions.md#the-verifiable-log): signed tree heads, the
signing keys, an entry's inclusion proof and a consistency proof between two heads. Every hash is
lower-case hex; a proof is checked as RFC 9162 says (the `verifier/` package does it offline)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from casefile.audit import log_repository as store
from casefile.audit import merkle
from casefile.audit.hashing import entry_fields
from casefile.audit.signing import public_key_pem
from casefile.clock import format_timestamp
from casefile.errors import Conflict, ErrorDetail, NotFound, ValidationFailed
from casefile.models import AuditEntry, AuditSigningKey, AuditTreeHead

NO_HEAD = "No signed tree head yet: the sequencer signs the first one when it starts"


def head_out(head: AuditTreeHead) -> dict[str, Any]:
    return {
        "tree_size": head.tree_size,
        "root_hash": head.root_hash,
        "timestamp": head.timestamp,
        "signed_at": format_timestamp(datetime.fromtimestamp(head.timestamp / 1000, UTC)),
        "key_id": head.key_id,
        "signature": head.signature,
    }


def key_out(key: AuditSigningKey) -> dict[str, Any]:
    return {
        "key_id": key.key_id,
        "algorithm": "Ed25519",
        "public_key": key.public_key,
        "public_key_pem": public_key_pem(bytes.fromhex(key.public_key)),
        "added_at": format_timestamp(key.added_at),
    }


async def signed_head(session: AsyncSession, tree_size: int | None = None) -> AuditTreeHead:
    """The newest signed head, or the one of `tree_size`."""
    if tree_size is None:
        head = await store.latest_head(session)
        if head is None:
            raise NotFound(NO_HEAD)
        return head
    found = await store.head_of_size(session, tree_size)
    if found is None:
        raise NotFound(f"No signed tree head of size {tree_size}")
    return found


async def signing_keys(session: AsyncSession) -> list[dict[str, Any]]:
    return [key_out(key) for key in await store.keys(session)]


async def inclusion_proof(session: AsyncSession, entry_id: str, tree_size: int | None) -> dict[str, Any]:
    """The proof that entry `entry_id` is in the tree of a signed head (the newest by default)."""
    entry = await session.get(AuditEntry, entry_id)
    if entry is None:
        raise NotFound("Audit entry not found")
    if entry.seq is None:
        raise Conflict("The entry is not in the log yet (`sequenced: false`); it is placed within a second")
    head = await signed_head(session, tree_size)
    index = entry.seq - 1
    if index >= head.tree_size:
        # No proof of this entry in that tree exists (it was placed later): the proof asked for
        # is not there, as with a head of a size never signed.
        detail = ErrorDetail("tree_size", "The entry was placed after this tree head; ask a later one")
        raise NotFound(detail.message, details=[detail])
    ranges = merkle.inclusion_ranges(index, head.tree_size)
    nodes = await store.nodes(session, merkle.nodes_needed(ranges))
    return {
        "entry": entry_fields(entry),
        "leaf_index": index,
        "leaf_hash": merkle.leaf_hash(bytes.fromhex(entry.hash)).hex(),
        "audit_path": [merkle.range_hash(start, end, nodes).hex() for start, end in ranges],
        "tree_head": head_out(head),
    }


async def consistency_proof(session: AsyncSession, first: int, second: int | None) -> dict[str, Any]:
    """The proof that the tree of signed head `second` (the newest by default) extends that of
    signed head `first`."""
    new = await signed_head(session, second)
    old = await signed_head(session, first)
    if not 0 < old.tree_size <= new.tree_size:
        raise ValidationFailed.on("first", "`first` must be a tree size from 1 up to `second`")
    ranges = merkle.consistency_ranges(old.tree_size, new.tree_size) if old.tree_size < new.tree_size else []
    nodes = await store.nodes(session, merkle.nodes_needed(ranges))
    return {
        "first": head_out(old),
        "second": head_out(new),
        "consistency_path": [merkle.range_hash(start, end, nodes).hex() for start, end in ranges],
    }


async def inclusion_paths(session: AsyncSession, leaf_indexes: list[int], tree_size: int) -> list[list[str]]:
    """The audit paths of many leaves in the tree of `tree_size` leaves (a signed head's), reading
    the stored nodes they need at once: an export proves a matter's entries a batch at a time."""
    ranges = [merkle.inclusion_ranges(index, tree_size) for index in leaf_indexes]
    wanted: set[merkle.NodeKey] = set()
    for each in ranges:
        wanted |= merkle.nodes_needed(each)
    nodes = await store.nodes(session, wanted)
    return [[merkle.range_hash(start, end, nodes).hex() for start, end in each] for each in ranges]
