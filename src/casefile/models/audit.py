"""The audit trail's tables: the entries requests write, and the verifiable log the sequencer
builds from them (docs/decisions/0019-audit-log.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Index, Integer, LargeBinary, SmallInteger, String, text
from sqlalchemy.orm import Mapped, mapped_column

from casefile.clock import new_id
from casefile.db import Base, UTCDateTime

# Positions from here up are those a process of the previous release (0.1, the hash chain) gives the
# entries it writes while it still runs beside this one during a rolling upgrade (migration 0017
# moved the old chain's head here). The sequencer places those entries like any other, keeping
# what the old process chained them with in `chained_seq` and `chained_prev_hash`.
PREVIOUS_RELEASE_SEQ_BASE = 2**62


class AuditEntry(Base):
    """One entry. A request inserts it with its content and `hash` (the SHA-256 of its content,
    `audit.hashing`) and never touches it again; the sequencer later gives it its position in the
    log (`seq`, from 1 without gaps) and the hash of the entry before it there (`prev_hash`).

    An entry a process of the previous release wrote (during a rolling upgrade) arrives with the
    old chain's `seq` (from `PREVIOUS_RELEASE_SEQ_BASE`) and `prev_hash`, and a `hash` over them
    (the chained rule): the sequencer keeps them in `chained_seq` and `chained_prev_hash` when it
    places the entry."""

    __tablename__ = "audit_entries"

    id: Mapped[str] = mapped_column(String(40), primary_key=True, default=lambda: new_id("aud"))
    seq: Mapped[int | None] = mapped_column(BigInteger)
    at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    actor_type: Mapped[str] = mapped_column(String(10))
    actor_id: Mapped[str | None] = mapped_column(String(40))
    user_id: Mapped[str | None] = mapped_column(String(40))
    action: Mapped[str] = mapped_column(String(64))
    resource_type: Mapped[str | None] = mapped_column(String(32))
    resource_id: Mapped[str | None] = mapped_column(String(64))
    case_id: Mapped[str | None] = mapped_column(String(40))
    outcome: Mapped[str] = mapped_column(String(10))
    ip: Mapped[str | None] = mapped_column(String(64))
    user_agent: Mapped[str | None] = mapped_column(String(512))
    request_id: Mapped[str | None] = mapped_column(String(40))
    details: Mapped[dict[str, Any]] = mapped_column(JSON)
    prev_hash: Mapped[str | None] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64))
    chained_seq: Mapped[int | None] = mapped_column(BigInteger)
    chained_prev_hash: Mapped[str | None] = mapped_column(String(64))

    # Lists are read newest first by id (ULIDs: creation order), each filter with the id. The
    # position and the link are unique once given; an entry not yet placed is in no index but
    # the sequencer's, so an INSERT maintains only what a list needs.
    __table_args__ = (
        Index("ix_audit_entries_case_id_id", "case_id", "id"),
        Index("ix_audit_entries_actor_id_id", "actor_id", "id"),
        Index("ix_audit_entries_action_id", "action", "id"),
        Index(
            "uq_audit_entries_seq",
            "seq",
            unique=True,
            postgresql_where=text("seq IS NOT NULL"),
            sqlite_where=text("seq IS NOT NULL"),
        ),
        # Links are unique in the log; a previous release's process chains its own entries, whose
        # links may repeat the log's until the sequencer places them.
        Index(
            "uq_audit_entries_prev_hash",
            "prev_hash",
            unique=True,
            postgresql_where=text(f"prev_hash IS NOT NULL AND seq < {PREVIOUS_RELEASE_SEQ_BASE}"),
            sqlite_where=text(f"prev_hash IS NOT NULL AND seq < {PREVIOUS_RELEASE_SEQ_BASE}"),
        ),
        Index(
            "ix_audit_entries_unplaced",
            "id",
            postgresql_where=text("seq IS NULL"),
            sqlite_where=text("seq IS NULL"),
        ),
    )


class AuditTreeNode(Base):
    """A node of the log's Merkle tree (RFC 9162): the hash of the perfect subtree of 2**level
    leaves starting at leaf `index * 2**level`. Level 0 holds the leaf hashes. Only complete
    subtrees are stored; the hash of any range is put together from them (`audit.merkle`)."""

    __tablename__ = "audit_tree_nodes"

    level: Mapped[int] = mapped_column(SmallInteger, primary_key=True)
    node_index: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    hash: Mapped[bytes] = mapped_column(LargeBinary)


class AuditTreeHead(Base):
    """A signed tree head: the log's size and root hash at a time, signed with Ed25519
    (`audit.signing`). One per batch of the sequencer."""

    __tablename__ = "audit_tree_heads"

    tree_size: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    root_hash: Mapped[str] = mapped_column(String(64))
    timestamp: Mapped[int] = mapped_column(BigInteger)  # milliseconds since the epoch, as signed
    key_id: Mapped[str] = mapped_column(String(64))
    signature: Mapped[str] = mapped_column(String(128))  # hex


class AuditSigningKey(Base):
    """A public key that signed (or signs) tree heads. Kept after a rotation, so that old heads
    still verify."""

    __tablename__ = "audit_signing_keys"

    key_id: Mapped[str] = mapped_column(String(64), primary_key=True)  # SHA-256 of the raw key, hex
    public_key: Mapped[str] = mapped_column(String(64))  # the raw 32-byte Ed25519 key, hex
    added_at: Mapped[datetime] = mapped_column(UTCDateTime)


class AuditLogState(Base):
    """The sequencer's one row (id 1): the log's size and root, and the sequencer's lease (one
    sequencer at a time; a crashed one's lease runs out and another takes over). Requests never
    read or lock it. `legacy_size`: entries 1 to this were hash-chained before the log existed
    (migration 0017), and their `hash` follows the chained rule (`audit.hashing`)."""

    __tablename__ = "audit_log_state"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tree_size: Mapped[int] = mapped_column(BigInteger, default=0)
    root_hash: Mapped[str] = mapped_column(String(64))
    legacy_size: Mapped[int] = mapped_column(BigInteger, default=0)
    lease_holder: Mapped[str | None] = mapped_column(String(64))
    lease_token: Mapped[int] = mapped_column(BigInteger, default=0)
    lease_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
