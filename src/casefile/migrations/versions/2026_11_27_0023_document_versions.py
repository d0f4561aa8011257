"""document versions

Revision ID: 0023
Revises: 0020
Create Date: 2026-11-27 18:45:00

Issue 29 item 1 (docs/decisions/0028-document-versions.md). Expand-only (docs/upgrading.md): a
new `document_versions` table, every existing document becoming its version 1; `documents.version`
with a server default of 1 (a previous release's process inserts documents without it: they are
at version 1, and get their version row when first read or revised); a nullable
`passages.version` (null: written before versions, so version 1).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import casefile.db

revision: str = "0023"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("documents", sa.Column("version", sa.Integer(), server_default=sa.text("1"), nullable=False))
    op.add_column("passages", sa.Column("version", sa.Integer(), nullable=True))
    op.create_table(
        "document_versions",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("document_id", sa.String(length=40), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("file_name", sa.String(length=255), nullable=False),
        sa.Column("file_size", sa.BigInteger(), nullable=False),
        sa.Column("file_type", sa.String(length=127), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("uploaded_by", sa.String(length=40), nullable=True),
        sa.Column("uploaded_via_key", sa.String(length=40), nullable=True),
        sa.Column("uploaded_at", casefile.db.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["document_id"],
            ["documents.id"],
            name=op.f("fk_document_versions_document_id_documents"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_document_versions")),
        sa.UniqueConstraint("document_id", "version", name=op.f("uq_document_versions_document_id_version")),
    )
    op.create_index(op.f("ix_document_versions_sha256"), "document_versions", ["sha256"])
    # Every existing document is its own version 1 (its id, prefixed, keeps the row's id unique).
    op.execute(
        "INSERT INTO document_versions (id, document_id, version, file_name, file_size, file_type,"
        " sha256, uploaded_by, uploaded_via_key, uploaded_at)"
        " SELECT 'docver_' || id, id, 1, file_name, file_size, file_type, sha256, uploaded_by,"
        " uploaded_via_key, uploaded_at FROM documents"
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_document_versions_sha256"), table_name="document_versions")
    op.drop_table("document_versions")
    with op.batch_alter_table("passages") as batch:
        batch.drop_column("version")
    with op.batch_alter_table("documents") as batch:
        batch.drop_column("version")
