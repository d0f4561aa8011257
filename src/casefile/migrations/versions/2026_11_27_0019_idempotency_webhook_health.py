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
    op.create_table(
        "webhook_recoveries",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("webhook_id", sa.String(40), sa.ForeignKey("webhooks.id", ondelete="CASCADE"), nullable=False),
        sa.Column("since", casefile.db.UTCDateTime(), nullable=False),
        sa.Column("until", casefile.db.UTCDateTime(), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("requeued", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_by", sa.String(40), nullable=True),
        sa.Column("created_at", casefile.db.UTCDateTime(), nullable=False),
        sa.Column("finished_at", casefile.db.UTCDateTime(), nullable=True),
    )
    op.create_index("ix_webhook_recoveries_webhook_id", "webhook_recoveries", ["webhook_id"])
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
    op.drop_index("ix_webhook_recoveries_webhook_id", "webhook_recoveries")
    op.drop_table("webhook_recoveries")
    op.drop_index("ix_idempotency_keys_expires_at", "idempotency_keys")
    op.drop_table("idempotency_keys")
