"""documents and content blobs

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 10:49:24.278457
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import casefile.db

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "blobs",
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("created_at", casefile.db.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("sha256", name=op.f("pk_blobs")),
    )
    op.create_table(
        "documents",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("case_id", sa.String(length=40), nullable=False),
        sa.Column("title", sa.String(length=500), nullable=False),
        sa.Column("document_type", sa.String(length=100), nullable=True),
        sa.Column("tags", sa.JSON(), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("file_name", sa.String(length=255), nullable=False),
        sa.Column("file_size", sa.BigInteger(), nullable=False),
        sa.Column("file_type", sa.String(length=127), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("uploaded_by", sa.String(length=40), nullable=True),
        sa.Column("uploaded_at", casefile.db.UTCDateTime(), nullable=False),
        sa.Column("updated_at", casefile.db.UTCDateTime(), nullable=False),
        sa.Column("processing_status", sa.String(length=20), nullable=False),
        sa.Column("ai", sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(
            ["case_id"], ["cases.id"], name=op.f("fk_documents_case_id_cases"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_documents")),
    )
    op.create_index("ix_documents_case_id_uploaded_at", "documents", ["case_id", "uploaded_at", "id"])
    op.create_index("ix_documents_case_id_file_size", "documents", ["case_id", "file_size", "id"])
    op.create_index("ix_documents_case_id_title", "documents", ["case_id", sa.text("lower(title)"), "id"])
    op.create_index(op.f("ix_documents_sha256"), "documents", ["sha256"])


def downgrade() -> None:
    op.drop_table("documents")
    op.drop_table("blobs")
