"""matter exports: the export jobs (`POST /cases/{id}/exports`)

Revision ID: 0024
Revises: 0023
Create Date: 2026-11-27 19:00:00

Expand-only (docs/upgrading.md): one new table; the zip itself lives in the content store.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import casefile.db

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "export_jobs",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("case_id", sa.String(length=40), nullable=False),
        sa.Column("acting_as", sa.JSON(), nullable=False),
        sa.Column("requested_by", sa.String(length=40), nullable=True),
        sa.Column("total_files", sa.Integer(), nullable=False),
        sa.Column("files_done", sa.Integer(), nullable=False),
        sa.Column("bytes_done", sa.BigInteger(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=True),
        sa.Column("size", sa.BigInteger(), nullable=True),
        sa.Column("summary", sa.JSON(), nullable=True),
        sa.Column("error", sa.JSON(), nullable=True),
        sa.Column("max_attempts", sa.Integer(), nullable=False),
        sa.Column("created_at", casefile.db.UTCDateTime(), nullable=False),
        sa.Column("updated_at", casefile.db.UTCDateTime(), nullable=False),
        sa.Column("finished_at", casefile.db.UTCDateTime(), nullable=True),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("attempts_made", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", casefile.db.UTCDateTime(), nullable=False),
        sa.Column("lease_expires_at", casefile.db.UTCDateTime(), nullable=True),
        sa.Column("lease_token", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_export_jobs")),
    )
    op.create_index(op.f("ix_export_jobs_case_id"), "export_jobs", ["case_id"])
    op.create_index(op.f("ix_export_jobs_requested_by"), "export_jobs", ["requested_by"])
    op.create_index(
        "ix_export_jobs_due",
        "export_jobs",
        ["next_attempt_at"],
        postgresql_where=sa.text("status IN ('pending', 'running')"),
        sqlite_where=sa.text("status IN ('pending', 'running')"),
    )


def downgrade() -> None:
    op.drop_table("export_jobs")
