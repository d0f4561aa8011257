"""The log's Merkle tree, as Certificate Transparency builds it (RFC 9162, section 2.1).

Hashes are SHA-256 with domain separation: a leaf is `SHA-256(0x00 || data)`, an inner node
`SHA-256(0x01 || left || right)`, and the hash of an empty tree `SHA-256()`. The tree over `n`
leaves splits at `k`, the largest power of two smaller than `n`: the first `k` leaves on the left,
the rest on the right.

Every subtree the RFC's recursion meets starts at a multiple of its largest power of two, so its
hash is put together from the perfect, aligned subtrees that its size's binary digits name
(`perfect_parts`), folded from the right (`range_hash`). Those are the only nodes the database keeps
(`AuditTreeNode`: level and index of each complete subtree): an inclusion or consistency proof for
any size reads O(log² n) of them, and appending a leaf writes at most log n new ones (`Frontier`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field

NodeKey = tuple[int, int]  # (level, index): leaves index * 2**level to (index + 1) * 2**level - 1

EMPTY_ROOT = hashlib.sha256(b"").digest()


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(size: int) -> int:
    """The largest power of two smaller than `size` (size > 1)."""
    return 1 << ((size - 1).bit_length() - 1)


def root_of(leaves: list[bytes]) -> bytes:
    """MTH(D[n]) straight from the RFC's definition, over leaf hashes (for checks and tests)."""
    if not leaves:
        return EMPTY_ROOT
    if len(leaves) == 1:
        return leaves[0]
    k = _split(len(leaves))
    return node_hash(root_of(leaves[:k]), root_of(leaves[k:]))


def perfect_parts(start: int, end: int) -> list[NodeKey]:
    """The aligned perfect subtrees that make up leaves `start` to `end - 1`, left to right."""
    parts = []
    while start < end:
        level = (
            ((end - start).bit_length() - 1)
            if start == 0
            else min((start & -start).bit_length() - 1, (end - start).bit_length() - 1)
        )
        parts.append((level, start >> level))
        start += 1 << level
    return parts


def range_hash(start: int, end: int, nodes: Mapping[NodeKey, bytes]) -> bytes:
    """MTH of leaves `start` to `end - 1` (a range the RFC's recursion meets), from stored nodes."""
    parts = [nodes[key] for key in perfect_parts(start, end)]
    result = parts[-1]
    for part in reversed(parts[:-1]):
        result = node_hash(part, result)
    return result


# --- proofs: which ranges they hold, then their hashes from the stored nodes ---------------------


def inclusion_ranges(index: int, size: int) -> list[tuple[int, int]]:
    """The ranges whose hashes make PATH(index, D[size]) (RFC 9162, 2.1.3.1), in proof order."""
    if not 0 <= index < size:
        raise ValueError("the leaf is not in the tree")
    ranges: list[tuple[int, int]] = []
    start, end = 0, size
    while end - start > 1:
        k = _split(end - start)
        if index < start + k:
            ranges.append((start + k, end))
            end = start + k
        else:
            ranges.append((start, start + k))
            start += k
    return list(reversed(ranges))


def consistency_ranges(first: int, second: int) -> list[tuple[int, int]]:
    """The ranges whose hashes make PROOF(first, D[second]) (RFC 9162, 2.1.4.1), in proof order."""
    if not 0 < first <= second:
        raise ValueError("a consistency proof needs 0 < first <= second")
    ranges: list[tuple[int, int]] = []
    start, end, whole = 0, second, True
    m = first
    while m != end - start:
        k = _split(end - start)
        if m <= k:
            ranges.append((start + k, end))
            end = start + k
        else:
            ranges.append((start, start + k))
            m -= k
            start += k
            whole = False
    if not whole:
        ranges.append((start, end))
    return list(reversed(ranges))


def nodes_needed(ranges: list[tuple[int, int]]) -> set[NodeKey]:
    return {key for start, end in ranges for key in perfect_parts(start, end)}


# --- checking proofs (what any verifier does: the verifier/ package has the same code) ---------


def root_from_inclusion(index: int, size: int, leaf: bytes, path: list[bytes]) -> bytes | None:
    """The root an inclusion proof leads to (RFC 9162, 2.1.3.2), or None if it cannot be one."""
    if index >= size:
        return None
    fn, sn, r = index, size - 1, leaf
    for p in path:
        if sn == 0:
            return None
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            r = node_hash(r, p)
        fn, sn = fn >> 1, sn >> 1
    return r if sn == 0 else None


def consistent(first: int, second: int, first_root: bytes, second_root: bytes, path: list[bytes]) -> bool:
    """Whether `path` proves the tree of `second` leaves extends the one of `first` (2.1.4.2)."""
    if first == second:
        return not path and first_root == second_root
    if not 0 < first < second or not path:
        return False
    if first & (first - 1) == 0:
        path = [first_root, *path]
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr, sr = node_hash(c, fr), node_hash(c, sr)
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            sr = node_hash(sr, c)
        fn, sn = fn >> 1, sn >> 1
    return fr == first_root and sr == second_root and sn == 0


# --- appending --------------------------------------------------------------------------------


@dataclass
class Frontier:
    """The right edge of a tree being appended to: the perfect subtrees its size's binary digits
    name, left to right (level, hash). Appending a leaf returns the nodes it completed (the leaf
    itself included), to be stored."""

    size: int = 0
    parts: list[tuple[int, bytes]] = field(default_factory=list)

    @classmethod
    def of(cls, size: int, nodes: Mapping[NodeKey, bytes]) -> Frontier:
        """The frontier of a tree of `size` leaves, from its stored nodes (`frontier_keys`)."""
        return cls(size, [(level, nodes[(level, index)]) for level, index in perfect_parts(0, size)])

    def append(self, leaf: bytes) -> list[tuple[NodeKey, bytes]]:
        index = self.size
        self.size += 1
        made = [((0, index), leaf)]
        level, value = 0, leaf
        while self.parts and self.parts[-1][0] == level:
            _, left = self.parts.pop()
            level, value = level + 1, node_hash(left, value)
            made.append(((level, index >> level), value))
        self.parts.append((level, value))
        return made

    def root(self) -> bytes:
        if not self.parts:
            return EMPTY_ROOT
        result = self.parts[-1][1]
        for _, part in reversed(self.parts[:-1]):
            result = node_hash(part, result)
        return result

    def copy(self) -> Frontier:
        return Frontier(self.size, list(self.parts))


def frontier_keys(size: int) -> list[NodeKey]:
    return perfect_parts(0, size)
