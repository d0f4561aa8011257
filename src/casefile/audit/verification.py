"""`casefile audit verify`: the whole log checked against its signed tree heads (and against heads
kept outside Casefile), stopping at the first thing that is wrong, which it names.

In log order, each placed entry must: come at the next position (none missing); hash to its
`hash` (the content rule, or the chained rule for the entries chained before the log); be the
entry whose leaf the tree stored at that position (not replaced or moved); and link to the entry
before it (`prev_hash`). Each time the entries reach the size of a signed head, the head's
signature must verify with its key and the root of the entries so far must be its root; the same
for every kept head. At the end, the log must reach the size the sequencer recorded and every
signed head, and no placed entry may lie beyond the newest head.

What the check stands on: the signatures (whoever can change the database but not read the key
cannot make a head), and the kept heads (whoever holds the key too can rewrite the whole log and
sign new heads; a head kept elsewhere before the rewrite no longer matches).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.audit import log_repository as store
from casefile.audit import repository
from casefile.audit.hashing import GENESIS_HASH, entry_fields, expected_hash
from casefile.audit.merkle import Frontier, leaf_hash
from casefile.audit.signing import signature_valid
from casefile.clock import format_timestamp
from casefile.models import AuditEntry, AuditLogState, AuditTreeHead

HEAD_PAGE = 1000


@dataclass(frozen=True)
class Problem:
    """The first thing found wrong: at an entry, at a signed (or kept) head, or at the log's end."""

    reason: str
    entry_id: str | None = None
    seq: int | None = None
    tree_size: int | None = None

    def describe(self) -> str:
        if self.entry_id is not None:
            return f"entry {self.entry_id} (seq {self.seq}): {self.reason}"
        if self.tree_size is not None:
            return f"the tree head of size {self.tree_size}: {self.reason}"
        return self.reason


@dataclass
class Verification:
    checked: int = 0  # entries found intact, in log order, before any problem
    heads: int = 0  # signed heads checked
    kept: int = 0  # kept heads checked
    waiting: int = 0  # committed entries the sequencer has not placed yet
    broken: Problem | None = None
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Checkpoint:
    tree_size: int
    root_hash: str
    source: str  # "signed" or "kept"
    timestamp: int
    key_id: str
    signature: str
    public_key: bytes | None


async def verify(session: AsyncSession, kept_heads: list[dict[str, Any]] | None = None) -> Verification:
    """Check the log as the sequencer had recorded it when the check began (later additions are
    for the next check). `kept_heads`: heads kept outside (`casefile audit heads`), each with its
    public key."""
    result = Verification()
    state = await session.scalar(select(AuditLogState).where(AuditLogState.id == store.STATE_ID))
    size, legacy = (state.tree_size, state.legacy_size) if state else (0, 0)
    waiting = select(func.count()).select_from(AuditEntry).where(AuditEntry.seq.is_(None))
    result.waiting = int(await session.scalar(waiting) or 0)
    keys = {key.key_id: bytes.fromhex(key.public_key) for key in await store.keys(session)}
    kept = sorted(_kept(kept_heads or []), key=lambda c: c.tree_size)
    checker = _Checker(result, keys, legacy)
    heads = _heads(session, size)
    pending = await anext(heads, None)
    while pending is not None and pending.tree_size == 0:  # the empty log's head
        if not checker.checkpoint(pending, Frontier()):
            return result
        pending = await anext(heads, None)
    while kept and kept[0].tree_size == 0:
        if not checker.checkpoint(kept.pop(0), Frontier()):
            return result
    async for batch in repository.log_batches(session, up_to=size):
        positions = [entry.seq or 0 for entry in batch]
        stored = await store.leaf_hashes(session, positions[0] - 1, positions[-1])
        for entry, seq in zip(batch, positions, strict=True):
            if not checker.entry(entry, stored.get(seq - 1)):
                return result
            while pending is not None and pending.tree_size == checker.frontier.size:
                if not checker.checkpoint(pending, checker.frontier):
                    return result
                pending = await anext(heads, None)
            while kept and kept[0].tree_size == checker.frontier.size:
                if not checker.checkpoint(kept.pop(0), checker.frontier):
                    return result
    end = checker.frontier.size
    if end < size:
        result.broken = Problem(
            f"the log ends at position {end}, but the sequencer recorded {size} entries: "
            f"entries {end + 1} to {size} were deleted (the log was truncated)"
        )
    elif pending is not None:
        result.broken = Problem(
            f"the log ends at position {end}, but a signed tree head covers {pending.tree_size} entries: "
            "the newest entries were deleted (the log was truncated)",
            tree_size=pending.tree_size,
        )
    elif kept:
        result.broken = Problem(
            f"a kept tree head (signed at {_when(kept[0].timestamp)}) covers {kept[0].tree_size} entries, "
            f"but the log holds {end}: it was truncated or rewritten",
            tree_size=kept[0].tree_size,
        )
    elif state is not None and checker.frontier.root().hex() != state.root_hash:
        result.broken = Problem("the sequencer's recorded root hash is not the root of the log's entries")
    elif checker.last_head_size != end and not (checker.last_head_size is None and end == legacy):
        first = await session.scalar(
            select(AuditEntry).where(AuditEntry.seq == (checker.last_head_size or 0) + 1)
        )
        result.broken = Problem(
            "it is placed in the log but no signed tree head covers it (inserted)",
            entry_id=first.id if first else None,
            seq=(checker.last_head_size or 0) + 1,
        )
    elif checker.last_head_size is None and end:
        result.notes.append(f"the {end} entries chained before the log await their first signed head")
    beyond = await repository.placed_beyond(session, size)
    if result.broken is None and beyond is not None and state is not None:
        result.notes.append(
            f"entries placed after the check began (from position {beyond.seq}) are left for the next"
        )
    return result


class _Checker:
    def __init__(self, result: Verification, keys: dict[str, bytes], legacy: int) -> None:
        self.result = result
        self.keys = keys
        self.legacy = legacy
        self.frontier = Frontier()
        self.last_hash = GENESIS_HASH
        self.last_head_size: int | None = None
        self.since_checkpoint: AuditEntry | None = None  # the first entry after the last good one

    def entry(self, entry: AuditEntry, stored_leaf: bytes | None) -> bool:
        seq = self.frontier.size + 1
        fields = entry_fields(entry)
        leaf = leaf_hash(bytes.fromhex(entry.hash)) if len(entry.hash) == 64 else b""
        if entry.seq != seq:
            reason = f"entries {seq} to {entry.seq - 1} are missing (deleted)"  # type: ignore[operator]
        elif expected_hash(fields, legacy=seq <= self.legacy) != entry.hash:
            reason = "its content does not match its hash (the entry was edited)"
        elif stored_leaf is not None and stored_leaf != leaf:
            reason = (
                "it is not the entry the log placed at this position (its leaf hash differs from the "
                "tree's): entries were reordered, or this one replaced"
            )
        elif entry.prev_hash != self.last_hash:
            reason = (
                "its prev_hash is not the hash of the entry before it "
                "(an entry before it was deleted, or entries were reordered)"
            )
        else:
            self.frontier.append(leaf)
            self.last_hash = entry.hash
            self.result.checked += 1
            if self.since_checkpoint is None:
                self.since_checkpoint = entry
            return True
        self.result.broken = Problem(reason, entry_id=entry.id, seq=entry.seq)
        return False

    def checkpoint(self, head: AuditTreeHead | _Checkpoint, frontier: Frontier) -> bool:
        kept = isinstance(head, _Checkpoint) and head.source == "kept"
        public_key = head.public_key if isinstance(head, _Checkpoint) and head.public_key else None
        public_key = public_key or self.keys.get(head.key_id)
        which = "the kept tree head" if kept else "the signed tree head"
        problem = None
        try:
            root, signature = bytes.fromhex(head.root_hash), bytes.fromhex(head.signature)
        except ValueError:
            root, signature = b"", b""
        if public_key is None:
            problem = f"{which} is signed by an unknown key ({head.key_id})"
        elif not signature_valid(public_key, head.tree_size, head.timestamp, root, signature):
            problem = f"the signature of {which} does not verify: the head was altered"
        elif frontier.root() != root:
            first = self.since_checkpoint
            where = f" (from entry {first.id} at position {first.seq})" if first is not None else ""
            problem = (
                f"the log's entries up to position {head.tree_size}{where} do not have the root of "
                f"{which} signed at {_when(head.timestamp)}: the log was rewritten"
            )
        if problem is not None:
            self.result.broken = Problem(problem, tree_size=head.tree_size)
            return False
        if kept:
            self.result.kept += 1
        else:
            self.result.heads += 1
            self.last_head_size = head.tree_size
        self.since_checkpoint = None
        return True


async def _heads(session: AsyncSession, up_to: int) -> AsyncIterator[AuditTreeHead]:
    after = -1
    while True:
        page = [
            head
            for head in await store.heads(session, after_size=after, limit=HEAD_PAGE)
            if head.tree_size <= up_to
        ]
        for head in page:
            yield head
        if len(page) < HEAD_PAGE:
            return
        after = page[-1].tree_size


def _kept(heads: list[dict[str, Any]]) -> list[_Checkpoint]:
    return [
        _Checkpoint(
            tree_size=int(head["tree_size"]),
            root_hash=str(head["root_hash"]),
            source="kept",
            timestamp=int(head["timestamp"]),
            key_id=str(head["key_id"]),
            signature=str(head["signature"]),
            public_key=bytes.fromhex(head["public_key"]) if head.get("public_key") else None,
        )
        for head in heads
    ]


def _when(timestamp: int) -> str:
    return format_timestamp(datetime.fromtimestamp(timestamp / 1000, UTC))
