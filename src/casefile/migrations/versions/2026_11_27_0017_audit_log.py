"""the audit trail becomes a verifiable log: no shared head row, a Merkle tree and signed heads

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-27 12:00:00

Every audited request used to lock `audit_chain_head` until it committed, so the whole firm's
traffic passed through one row lock (issue 33). Requests now insert entries with their own content
hash only, and the sequencer (`casefile.audit.sequencer`) gives them their positions, appends them
to a Merkle tree (RFC 9162) and signs tree heads (docs/decisions/0019-audit-log.md).

What this revision does, in one transaction:
1. checks the existing hash chain with its own rule (each entry's hash, its link to the one
   before, numbers without gaps, and the head row). A broken chain stops the migration with the
   first broken entry named: the log would otherwise vouch for a history that does not verify.
2. expands, without contracting (docs/upgrading.md): `seq` and `prev_hash` may be empty until the
   sequencer places an entry; lists are indexed by id instead of `seq`. The head row and its
   trigger stay, for the processes of the previous release (0.1) that still run during a rolling
   upgrade: the head moves to `PREVIOUS_RELEASE_SEQ_BASE` (2**62), so what such a process chains
   (positions from there up, a link from a marker) never meets the log's own positions or links,
   and the sequencer places those entries like any other, keeping their old position and link in
   `chained_seq` and `chained_prev_hash`, which their hash covers. The release after next drops
   the head row, once no 0.1 process can be left.
3. makes the tables of the log, and puts the chained entries in it as its first leaves, in their
   order (their hashes, which cover their position and link, are the leaves' data). The first
   signed head is made by the sequencer at its first start (the migration has no key).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import casefile.db
from casefile.audit.hashing import GENESIS_HASH, chained_hash
from casefile.audit.merkle import EMPTY_ROOT, Frontier, leaf_hash
from casefile.clock import format_timestamp

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH = 1000
# As `casefile.models.audit.PREVIOUS_RELEASE_SEQ_BASE` (a migration keeps its own copy of what it
# writes: the model may change later).
PREVIOUS_RELEASE_SEQ_BASE = 2**62
# The link a previous release's process gives the first entry it chains after this migration: the
# hash of no entry, so it repeats no link of the log.
PREVIOUS_RELEASE_FIRST_LINK = "f" * 64
_ENTRIES = sa.table(
    "audit_entries",
    *(sa.column(name, sa.String()) for name in ("id", "actor_type", "actor_id", "user_id", "action")),
    *(sa.column(name, sa.String()) for name in ("resource_type", "resource_id", "case_id", "outcome")),
    *(sa.column(name, sa.String()) for name in ("ip", "user_agent", "request_id", "prev_hash", "hash")),
    sa.column("seq", sa.BigInteger()),
    sa.column("at", casefile.db.UTCDateTime()),
    sa.column("details", sa.JSON()),
)


class BrokenChain(RuntimeError):
    pass


def _chained_entries(bind: sa.Connection) -> tuple[int, list[bytes]]:
    """Check the chain as `casefile audit verify` did; its length and its leaves' data."""
    head = bind.execute(sa.text("SELECT last_seq, last_hash FROM audit_chain_head WHERE id = 1")).first()
    last_seq, last_hash = 0, GENESIS_HASH
    hashes: list[bytes] = []
    while True:
        rows = bind.execute(
            sa.select(_ENTRIES).where(_ENTRIES.c.seq > last_seq).order_by(_ENTRIES.c.seq).limit(BATCH)
        ).all()
        for row in rows:
            fields = dict(row._mapping)
            fields["at"] = format_timestamp(fields["at"])
            if chained_hash(fields) != row.hash:
                reason = "its content does not match its hash (the entry was edited or moved)"
            elif row.prev_hash != last_hash:
                reason = "its prev_hash is not the hash of the entry before it (an entry was deleted or moved)"
            elif row.seq != last_seq + 1:
                reason = f"entries {last_seq + 1} to {row.seq - 1} are missing (deleted)"
            else:
                last_seq, last_hash = row.seq, row.hash
                hashes.append(bytes.fromhex(row.hash))
                continue
            raise BrokenChain(_refusal(f"entry {row.id} (seq {row.seq}): {reason}"))
        if len(rows) < BATCH:
            break
    if head is not None and (head.last_seq, head.last_hash) != (last_seq, last_hash):
        raise BrokenChain(
            _refusal(
                f"the chain ends at seq {last_seq} but its head records seq {head.last_seq}: "
                "the newest entries were deleted or edited"
            )
        )
    return last_seq, hashes


def _refusal(where: str) -> str:
    return (
        f"the audit trail's hash chain is broken at {where}. Migration 0017 puts the chain into the "
        "signed audit log as it is, which would vouch for a history that does not verify, so it "
        "stops here and changes nothing. Restore the audit trail from a backup taken before the "
        "damage (or repair the named entries from an export) and migrate again."
    )


def upgrade() -> None:
    bind = op.get_bind()
    size, hashes = _chained_entries(bind)

    if bind.dialect.name == "sqlite":  # the table is copied below, which would drop its trigger
        op.execute("DROP TRIGGER IF EXISTS audit_head_follow")
    for name in ("ix_audit_entries_case_id_seq", "ix_audit_entries_actor_id_seq", "ix_audit_entries_action_seq"):
        op.drop_index(name, table_name="audit_entries")
    with op.batch_alter_table("audit_entries") as batch:
        batch.drop_constraint("uq_audit_entries_seq", type_="unique")
        batch.drop_constraint("uq_audit_entries_prev_hash", type_="unique")
        batch.alter_column("seq", existing_type=sa.BigInteger(), nullable=True)
        batch.alter_column("prev_hash", existing_type=sa.String(length=64), nullable=True)
        batch.add_column(sa.Column("chained_seq", sa.BigInteger(), nullable=True))
        batch.add_column(sa.Column("chained_prev_hash", sa.String(length=64), nullable=True))
    if bind.dialect.name == "sqlite":
        # As migration 0015's, only for a previous release's process (this release inserts
        # entries with no `seq`, which would only run an UPDATE that changes nothing).
        op.execute(
            "CREATE TRIGGER audit_head_follow AFTER INSERT ON audit_entries WHEN new.seq IS NOT NULL BEGIN "
            "UPDATE audit_chain_head SET last_seq = new.seq, last_hash = new.hash "
            "WHERE id = 1 AND new.seq > last_seq; END"
        )
    op.execute(
        f"UPDATE audit_chain_head SET last_seq = {PREVIOUS_RELEASE_SEQ_BASE}, "
        f"last_hash = '{PREVIOUS_RELEASE_FIRST_LINK}' WHERE id = 1"
    )
    op.create_index("ix_audit_entries_case_id_id", "audit_entries", ["case_id", "id"])
    op.create_index("ix_audit_entries_actor_id_id", "audit_entries", ["actor_id", "id"])
    op.create_index("ix_audit_entries_action_id", "audit_entries", ["action", "id"])
    placed, unplaced = sa.text("seq IS NOT NULL"), sa.text("seq IS NULL")
    # Links are unique in the log; a previous release's process chains its own until they are placed.
    linked = sa.text(f"prev_hash IS NOT NULL AND seq < {PREVIOUS_RELEASE_SEQ_BASE}")
    op.create_index(
        "uq_audit_entries_seq", "audit_entries", ["seq"], unique=True, postgresql_where=placed, sqlite_where=placed
    )
    op.create_index(
        "uq_audit_entries_prev_hash",
        "audit_entries",
        ["prev_hash"],
        unique=True,
        postgresql_where=linked,
        sqlite_where=linked,
    )
    op.create_index(
        "ix_audit_entries_unplaced", "audit_entries", ["id"], postgresql_where=unplaced, sqlite_where=unplaced
    )

    nodes = op.create_table(
        "audit_tree_nodes",
        sa.Column("level", sa.SmallInteger(), nullable=False),
        sa.Column("node_index", sa.BigInteger(), nullable=False),
        sa.Column("hash", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("level", "node_index", name=op.f("pk_audit_tree_nodes")),
    )
    op.create_table(
        "audit_tree_heads",
        sa.Column("tree_size", sa.BigInteger(), nullable=False),
        sa.Column("root_hash", sa.String(length=64), nullable=False),
        sa.Column("timestamp", sa.BigInteger(), nullable=False),
        sa.Column("key_id", sa.String(length=64), nullable=False),
        sa.Column("signature", sa.String(length=128), nullable=False),
        sa.PrimaryKeyConstraint("tree_size", name=op.f("pk_audit_tree_heads")),
    )
    op.create_table(
        "audit_signing_keys",
        sa.Column("key_id", sa.String(length=64), nullable=False),
        sa.Column("public_key", sa.String(length=64), nullable=False),
        sa.Column("added_at", casefile.db.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("key_id", name=op.f("pk_audit_signing_keys")),
    )
    state = op.create_table(
        "audit_log_state",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("tree_size", sa.BigInteger(), nullable=False),
        sa.Column("root_hash", sa.String(length=64), nullable=False),
        sa.Column("legacy_size", sa.BigInteger(), nullable=False),
        sa.Column("lease_holder", sa.String(length=64), nullable=True),
        sa.Column("lease_token", sa.BigInteger(), nullable=False),
        sa.Column("lease_expires_at", casefile.db.UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_log_state")),
    )

    frontier = Frontier()
    made: list[dict[str, object]] = []
    for value in hashes:
        made.extend(
            {"level": level, "node_index": index, "hash": node}
            for (level, index), node in frontier.append(leaf_hash(value))
        )
        if len(made) >= BATCH:
            op.bulk_insert(nodes, made)
            made = []
    if made:
        op.bulk_insert(nodes, made)
    root = frontier.root() if size else EMPTY_ROOT
    op.bulk_insert(
        state,
        [{"id": 1, "tree_size": size, "root_hash": root.hex(), "legacy_size": size, "lease_token": 0}],
    )


def downgrade() -> None:
    """Back to the single-head chain: every entry, in log order and then the unplaced ones by id,
    is chained again with the chained rule (so the hashes of entries written since 0017 change),
    and the head row points at the last again. The signed heads are dropped with the log."""
    bind = op.get_bind()
    legacy = bind.execute(sa.text("SELECT legacy_size FROM audit_log_state WHERE id = 1")).scalar() or 0
    ordered = sa.select(_ENTRIES).order_by(_ENTRIES.c.seq.is_(None), _ENTRIES.c.seq, _ENTRIES.c.id)
    rows = [dict(row._mapping) for row in bind.execute(ordered)]
    # Out of the way of the unique constraints first, then each entry's place in the chain.
    bind.execute(sa.update(_ENTRIES).values(seq=None, prev_hash=None))
    last_hash = GENESIS_HASH
    for seq, fields in enumerate(rows, start=1):
        if seq > legacy:
            fields.update(seq=seq, prev_hash=last_hash, at=format_timestamp(fields["at"]))
            fields["hash"] = chained_hash(fields)
        bind.execute(
            sa.update(_ENTRIES)
            .where(_ENTRIES.c.id == fields["id"])
            .values(seq=seq, prev_hash=last_hash, hash=fields["hash"])
        )
        last_hash = fields["hash"]
    for name in ("audit_log_state", "audit_signing_keys", "audit_tree_heads", "audit_tree_nodes"):
        op.drop_table(name)
    for name in ("ix_audit_entries_unplaced", "uq_audit_entries_prev_hash", "uq_audit_entries_seq"):
        op.drop_index(name, table_name="audit_entries")
    for name in ("ix_audit_entries_case_id_id", "ix_audit_entries_actor_id_id", "ix_audit_entries_action_id"):
        op.drop_index(name, table_name="audit_entries")
    if bind.dialect.name == "sqlite":  # the table is copied below, which would drop its trigger
        op.execute("DROP TRIGGER IF EXISTS audit_head_follow")
    with op.batch_alter_table("audit_entries") as batch:
        batch.drop_column("chained_prev_hash")
        batch.drop_column("chained_seq")
        batch.alter_column("seq", existing_type=sa.BigInteger(), nullable=False)
        batch.alter_column("prev_hash", existing_type=sa.String(length=64), nullable=False)
        batch.create_unique_constraint("uq_audit_entries_seq", ["seq"])
        batch.create_unique_constraint("uq_audit_entries_prev_hash", ["prev_hash"])
    op.create_index("ix_audit_entries_case_id_seq", "audit_entries", ["case_id", "seq"])
    op.create_index("ix_audit_entries_actor_id_seq", "audit_entries", ["actor_id", "seq"])
    op.create_index("ix_audit_entries_action_seq", "audit_entries", ["action", "seq"])
    op.execute(
        sa.text("UPDATE audit_chain_head SET last_seq = :seq, last_hash = :hash WHERE id = 1").bindparams(
            seq=len(rows), hash=last_hash
        )
    )
    if bind.dialect.name == "sqlite":
        op.execute(
            "CREATE TRIGGER audit_head_follow AFTER INSERT ON audit_entries BEGIN "
            "UPDATE audit_chain_head SET last_seq = new.seq, last_hash = new.hash "
            "WHERE id = 1 AND new.seq > last_seq; END"
        )
