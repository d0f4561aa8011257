"""Offline checks of Casefile's audit log: an entry's hash, an inclusion proof, a consistency
proof, a signed tree head (RFC 9162 Merkle trees; Ed25519 signatures). See README.md."""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Mapping
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

__all__ = [
    "VerificationError",
    "entry_hash_matches",
    "verify_consistency",
    "verify_inclusion",
    "verify_tree_head",
]

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


class VerificationError(ValueError):
    """What was checked does not hold."""


def _sha(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _canonical(entry: Mapping[str, Any], names: tuple) -> bytes:
    body = {name: entry[name] for name in names}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def entry_hash_matches(entry: Mapping[str, Any]) -> bool:
    """Whether the entry's `hash` is that of its content (or, for an entry chained before the
    log, of its content with its `seq` and `prev_hash`)."""
    return entry["hash"] in (
        _sha(_canonical(entry, CONTENT_FIELDS)).hex(),
        _sha(_canonical(entry, CHAINED_FIELDS)).hex(),
    )


def _node(left: bytes, right: bytes) -> bytes:
    return _sha(b"\x01" + left + right)


def _hex(value: str, what: str) -> bytes:
    try:
        raw = bytes.fromhex(value)
    except (TypeError, ValueError):
        raise VerificationError(f"{what} is not hex") from None
    return raw


def verify_tree_head(head: Mapping[str, Any], public_key: str) -> None:
    """The head's Ed25519 signature with `public_key` (hex, the raw 32 bytes)."""
    root = _hex(head["root_hash"], "root_hash")
    if len(root) != 32:
        raise VerificationError("root_hash is not 32 bytes")
    signed = struct.pack(">QQB", int(head["timestamp"]), int(head["tree_size"]), 32) + root + b"\x00\x00"
    try:
        Ed25519PublicKey.from_public_bytes(_hex(public_key, "public_key")).verify(
            _hex(head["signature"], "signature"), signed
        )
    except (InvalidSignature, ValueError):
        size = head["tree_size"]
        raise VerificationError(f"the tree head of size {size} is not signed by this key") from None


def verify_inclusion(proof: Mapping[str, Any], public_key: str | None = None) -> None:
    """An inclusion proof as the API answers it: the entry, its leaf index, the audit path and the
    tree head (whose signature is checked too when `public_key` is given)."""
    entry, head = proof["entry"], proof["tree_head"]
    if not entry_hash_matches(entry):
        raise VerificationError(f"entry {entry['id']} does not hash to its hash")
    index, size = int(proof["leaf_index"]), int(head["tree_size"])
    if entry.get("seq") != index + 1:
        raise VerificationError("the leaf index is not the entry's position")
    r = _sha(b"\x00" + _hex(entry["hash"], "hash"))
    if index >= size:
        raise VerificationError("the leaf is beyond the tree")
    fn, sn = index, size - 1
    for value in proof["audit_path"]:
        p = _hex(value, "audit_path")
        if sn == 0:
            raise VerificationError("the audit path is too long")
        if fn & 1 or fn == sn:
            r = _node(p, r)
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            r = _node(r, p)
        fn, sn = fn >> 1, sn >> 1
    if sn != 0 or r != _hex(head["root_hash"], "root_hash"):
        raise VerificationError(f"entry {entry['id']} is not in the tree of size {size}")
    if public_key is not None:
        verify_tree_head(head, public_key)


def verify_consistency(proof: Mapping[str, Any], public_key: str | None = None) -> None:
    """A consistency proof as the API answers it: the tree of `second` extends that of `first`
    (both heads' signatures are checked too when `public_key` is given)."""
    first_head, second_head = proof["first"], proof["second"]
    first, second = int(first_head["tree_size"]), int(second_head["tree_size"])
    first_root = _hex(first_head["root_hash"], "root_hash")
    second_root = _hex(second_head["root_hash"], "root_hash")
    path: list[bytes] = [_hex(value, "consistency_path") for value in proof["consistency_path"]]
    if public_key is not None:
        verify_tree_head(first_head, public_key)
        verify_tree_head(second_head, public_key)
    if first == second:
        if path or first_root != second_root:
            raise VerificationError("two heads of one size must have one root and an empty proof")
        return
    if not 0 < first < second or not path:
        raise VerificationError("a consistency proof needs 0 < first < second and a path")
    if first & (first - 1) == 0:
        path = [first_root, *path]
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            raise VerificationError("the consistency path is too long")
        if fn & 1 or fn == sn:
            fr, sr = _node(c, fr), _node(c, sr)
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            sr = _node(sr, c)
        fn, sn = fn >> 1, sn >> 1
    if fr != first_root or sr != second_root or sn != 0:
        raise VerificationError(f"the tree of size {second} does not extend the tree of size {first}")
