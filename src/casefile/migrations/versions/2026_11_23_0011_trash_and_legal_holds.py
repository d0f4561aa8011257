"""trash (deleted_at, deleted_by on cases and documents) and legal holds

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-23 03:30:00

`DELETE` of a case or document now moves it to the trash: `deleted_at` and `deleted_by` on both
tables (NULL: not in the trash, as every existing row), and on documents `deleted_with_case`
(trashed by its case's deletion, so that restoring the case brings exactly those back). The new
table `legal_holds` holds the holds placed on cases, active until released.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import casefile.db

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    for table in ("cases", "documents"):
        op.add_column(table, sa.Column("deleted_at", casefile.db.UTCDateTime(), nullable=True))
        op.add_column(table, sa.Column("deleted_by", sa.String(length=40), nullable=True))
        op.create_index(f"ix_{table}_deleted_at", table, ["deleted_at"])
    op.add_column(
        "documents",
        sa.Column("deleted_with_case", sa.Boolean(), server_default=sa.false(), nullable=False),
    )
    op.create_table(
        "legal_holds",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("case_id", sa.String(length=40), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("created_by", sa.String(length=40), nullable=True),
        sa.Column("created_at", casefile.db.UTCDateTime(), nullable=False),
        sa.Column("released_at", casefile.db.UTCDateTime(), nullable=True),
        sa.Column("released_by", sa.String(length=40), nullable=True),
        sa.ForeignKeyConstraint(
            ["case_id"], ["cases.id"], name=op.f("fk_legal_holds_case_id_cases"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_legal_holds")),
    )
    op.create_index("ix_legal_holds_case_id_created_at", "legal_holds", ["case_id", "created_at", "id"])


def downgrade() -> None:
    # Trashed rows would reappear as live ones: the downgrade removes them for good first (their
    # content is collected as orphans at the next start).
    op.execute("DELETE FROM documents WHERE deleted_at IS NOT NULL")
    op.execute("DELETE FROM cases WHERE deleted_at IS NOT NULL")
    op.drop_index("ix_legal_holds_case_id_created_at", table_name="legal_holds")
    op.drop_table("legal_holds")
    op.drop_column("documents", "deleted_with_case")
    for table in ("documents", "cases"):
        op.drop_index(f"ix_{table}_deleted_at", table_name=table)
        op.drop_column(table, "deleted_by")
        op.drop_column(table, "deleted_at")
