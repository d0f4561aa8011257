from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class AuditEntryOut(BaseModel):
    """One entry as the API and the export show it; `hash` is the SHA-256 of its content's
    canonical JSON (docs/api-conventions.md#audit-trail). `seq` and `prev_hash` are null until the
    sequencer places the entry in the log (`sequenced`), within a second of its commit."""

    id: str
    seq: int | None
    sequenced: bool
    at: str
    actor_type: Literal["user", "api_key", "system"]
    actor_id: str | None
    user_id: str | None
    action: str
    resource_type: str | None
    resource_id: str | None
    case_id: str | None
    outcome: Literal["success", "denied", "failed"]
    ip: str | None
    user_agent: str | None
    request_id: str | None
    details: dict[str, Any]
    prev_hash: str | None
    hash: str
    chained_seq: int | None = Field(
        description="Only on an entry a previous release's process wrote during a rolling upgrade: "
        "the position it chained the entry at (its `hash` covers this and `chained_prev_hash`)"
    )
    chained_prev_hash: str | None


class TreeHeadOut(BaseModel):
    """A signed tree head: Ed25519 over RFC 9162's TreeHeadSignature (timestamp, tree_size,
    root_hash)."""

    tree_size: int
    root_hash: str = Field(description="The Merkle tree's root (RFC 9162), hex")
    timestamp: int = Field(description="Milliseconds since the epoch, as signed")
    signed_at: str
    key_id: str = Field(description="SHA-256 of the signing key's raw public key, hex")
    signature: str = Field(description="Ed25519 signature, hex")


class SigningKeyOut(BaseModel):
    key_id: str
    algorithm: Literal["Ed25519"]
    public_key: str = Field(description="The raw 32-byte public key, hex")
    public_key_pem: str
    added_at: str


class InclusionProofOut(BaseModel):
    entry: AuditEntryOut
    leaf_index: int = Field(description="`seq - 1`")
    leaf_hash: str = Field(description="SHA-256(0x00 || the entry's hash as 32 bytes), hex")
    audit_path: list[str]
    tree_head: TreeHeadOut


class ConsistencyProofOut(BaseModel):
    first: TreeHeadOut
    second: TreeHeadOut
    consistency_path: list[str]
