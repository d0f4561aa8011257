"""Signed tree heads: the bytes a head's signature covers, Ed25519 signing with the key from the
settings, and checking a head with a public key.

The signed bytes are RFC 9162's `TreeHeadSignature` (section 4.10): `uint64 timestamp`
(milliseconds since the epoch), `uint64 tree_size`, the root hash as `opaque NodeHash<32..2^8-1>`
(one length byte, 32, then the 32 bytes) and an empty `sth_extensions<0..2^16-1>` (two zero
bytes), all big-endian: 51 bytes. A key is named by its `key_id`, the SHA-256 (hex) of its raw
32-byte public key.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import struct
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat


class SigningKeyError(ValueError):
    """The configured signing key is not a base64 32-byte Ed25519 private key."""


def tree_head_bytes(tree_size: int, timestamp: int, root_hash: bytes) -> bytes:
    if len(root_hash) != 32:
        raise ValueError("a root hash is 32 bytes")
    return struct.pack(">QQB", timestamp, tree_size, 32) + root_hash + b"\x00\x00"


def key_id(public_key: bytes) -> str:
    return hashlib.sha256(public_key).hexdigest()


@dataclass(frozen=True)
class HeadSigner:
    """The process's signing key (`Settings.audit_signing_seed`)."""

    private_key: Ed25519PrivateKey

    @classmethod
    def from_seed(cls, seed: str) -> HeadSigner:
        """`seed`: base64 (standard or URL-safe alphabet) of 32 random bytes."""
        try:
            raw = base64.urlsafe_b64decode(seed.strip().replace("+", "-").replace("/", "_"))
        except (binascii.Error, ValueError) as exc:
            raise SigningKeyError("the audit signing key is not base64") from exc
        if len(raw) != 32:
            raise SigningKeyError("the audit signing key must be 32 bytes (base64 of 32 random bytes)")
        return cls(Ed25519PrivateKey.from_private_bytes(raw))

    @property
    def public_key(self) -> bytes:
        return self.private_key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)

    @property
    def key_id(self) -> str:
        return key_id(self.public_key)

    def sign(self, tree_size: int, timestamp: int, root_hash: bytes) -> bytes:
        return self.private_key.sign(tree_head_bytes(tree_size, timestamp, root_hash))


def signature_valid(
    public_key: bytes, tree_size: int, timestamp: int, root_hash: bytes, signature: bytes
) -> bool:
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(
            signature, tree_head_bytes(tree_size, timestamp, root_hash)
        )
    except (InvalidSignature, ValueError):
        return False
    return True


def public_key_pem(public_key: bytes) -> str:
    return (
        Ed25519PublicKey.from_public_bytes(public_key)
        .public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
        .decode("ascii")
    )
