"""audit trail: audit_entries and the chain head

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-23 03:20:00

`audit_entries` holds the hash-chained trail (docs/api-conventions.md#audit-trail);
`audit_chain_head` its one head row (id 1: the last entry's `seq` and `hash`), which every
writer locks to append, so that concurrent writers never fork the chain. The chain starts empty:
nothing that happened before this revision is known to it.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import casefile.db

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

GENESIS_HASH = "0" * 64


def upgrade() -> None:
    op.create_table(
        "audit_entries",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("at", casefile.db.UTCDateTime(), nullable=False),
        sa.Column("actor_type", sa.String(length=10), nullable=False),
        sa.Column("actor_id", sa.String(length=40), nullable=True),
        sa.Column("user_id", sa.String(length=40), nullable=True),
        sa.Column("action", sa.String(length=64), nullable=False),
        sa.Column("resource_type", sa.String(length=32), nullable=True),
        sa.Column("resource_id", sa.String(length=64), nullable=True),
        sa.Column("case_id", sa.String(length=40), nullable=True),
        sa.Column("outcome", sa.String(length=10), nullable=False),
        sa.Column("ip", sa.String(length=64), nullable=True),
        sa.Column("user_agent", sa.String(length=512), nullable=True),
        sa.Column("request_id", sa.String(length=40), nullable=True),
        sa.Column("details", sa.JSON(), nullable=False),
        sa.Column("prev_hash", sa.String(length=64), nullable=False),
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_entries")),
        sa.UniqueConstraint("seq", name=op.f("uq_audit_entries_seq")),
        sa.UniqueConstraint("prev_hash", name=op.f("uq_audit_entries_prev_hash")),
    )
    op.create_index("ix_audit_entries_at", "audit_entries", ["at"])
    op.create_index("ix_audit_entries_case_id_seq", "audit_entries", ["case_id", "seq"])
    op.create_index("ix_audit_entries_actor_id_seq", "audit_entries", ["actor_id", "seq"])
    op.create_index("ix_audit_entries_action_seq", "audit_entries", ["action", "seq"])
    head = op.create_table(
        "audit_chain_head",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("last_seq", sa.BigInteger(), nullable=False),
        sa.Column("last_hash", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_chain_head")),
    )
    op.bulk_insert(head, [{"id": 1, "last_seq": 0, "last_hash": GENESIS_HASH}])


def downgrade() -> None:
    op.drop_table("audit_chain_head")
    op.drop_index("ix_audit_entries_action_seq", table_name="audit_entries")
    op.drop_index("ix_audit_entries_actor_id_seq", table_name="audit_entries")
    op.drop_index("ix_audit_entries_case_id_seq", table_name="audit_entries")
    op.drop_index("ix_audit_entries_at", table_name="audit_entries")
    op.drop_table("audit_entries")
