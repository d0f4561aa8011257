"""idempotency keys; the webhooks' circuit and matter filters; interrupted delivery attempts

Revision ID: 0019
Revises: 0017
Create Date: 2026-11-27 15:00:00

Expand-only (docs/upgrading.md): a new table and new columns with defaults, so a process of the
previous release keeps running beside this one (it ignores them). See
docs/decisions/0024-idempotency-and-webhook-health.md.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import casefile.db

revision: str = "0019"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "idempotency_keys",
        sa.Column("principal_id", sa.String(80), primary_key=True),
        sa.Column("key", sa.String(255), primary_key=True),
        sa.Column("method", sa.String(10), nullable=False),
        sa.Column("path", sa.String(2048), nullable=False),
        sa.Column("request_hash", sa.String(64), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("headers", sa.JSON(), nullable=True),
        sa.Column("body", sa.LargeBinary(), nullable=True),
        sa.Column("created_at", casefile.db.UTCDateTime(), nullable=False),
        sa.Column("expires_at", casefile.db.UTCDateTime(), nullable=False),
    )
    op.create_index("ix_idempotency_keys_expires_at", "idempotency_keys", ["expires_at"])
    with op.batch_alter_table("webhooks") as batch:
        batch.add_column(sa.Column("failing_since", casefile.db.UTCDateTime(), nullable=True))
        batch.add_column(sa.Column("consecutive_failures", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("failing_warnings", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("disabled_reason", sa.Text(), nullable=True))
        batch.add_column(sa.Column("case_ids", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("case_types", sa.JSON(), nullable=True))
    with op.batch_alter_table("delivery_attempts") as batch:
        batch.add_column(sa.Column("interrupted", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("delivery_attempts") as batch:
        batch.drop_column("interrupted")
    with op.batch_alter_table("webhooks") as batch:
        for column in (
            "case_types",
            "case_ids",
            "disabled_reason",
            "failing_warnings",
            "consecutive_failures",
            "failing_since",
        ):
            batch.drop_column(column)
    op.drop_index("ix_idempotency_keys_expires_at", "idempotency_keys")
    op.drop_table("idempotency_keys")
