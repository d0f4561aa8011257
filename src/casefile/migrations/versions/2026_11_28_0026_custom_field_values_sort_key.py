"""custom_field_values: the case's created_at beside each value, in the value indexes

Revision ID: 0026
Revises: 0025
Create Date: 2026-11-28 03:00:00

Issue 27 (bench/custom_field_filter.py): a `cf.<name>=` filter in the case list's default order
(created_at) finds, counts and orders its matches from the value index alone, instead of reading
each matching case for its sort key (docs/decisions/0025-custom-fields-and-templates.md).

Expand-only (docs/upgrading.md): one nullable column, filled here from `cases` for every case's
value; indexes that end in it replace (field_id, value_*, case_id), which no code names; two small
partial indexes on `cases` (the ids of trashed and of restricted cases). A previous release's
process writes no custom-field values (0.1.0 has none), and the trash needs no flag here: whether a
case is trashed is still read from `cases` itself, so its trashing and restoring need nothing new.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import casefile.db

revision: str = "0026"
down_revision: str | None = "0025"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("custom_field_values", sa.Column("case_created_at", casefile.db.UTCDateTime(), nullable=True))
    # A correlated subquery: the same statement on both databases, one primary-key probe a row.
    op.execute(
        """UPDATE custom_field_values
           SET case_created_at = (SELECT cases.created_at FROM cases WHERE cases.id = custom_field_values.case_id)
           WHERE case_id IS NOT NULL"""
    )
    op.create_index(
        "ix_custom_field_values_text_created",
        "custom_field_values",
        ["field_id", "value_text", "case_created_at", "case_id"],
    )
    op.create_index(
        "ix_custom_field_values_number_created",
        "custom_field_values",
        ["field_id", "value_number", "case_created_at", "case_id"],
    )
    op.drop_index("ix_custom_field_values_text", table_name="custom_field_values")
    op.drop_index("ix_custom_field_values_number", table_name="custom_field_values")
    op.create_index(
        "ix_cases_trashed_id",
        "cases",
        ["id"],
        postgresql_where=sa.text("deleted_at IS NOT NULL"),
        sqlite_where=sa.text("deleted_at IS NOT NULL"),
    )
    op.create_index(
        "ix_cases_restricted_id",
        "cases",
        ["id"],
        postgresql_where=sa.text("access <> 'firm'"),
        sqlite_where=sa.text("access <> 'firm'"),
    )


def downgrade() -> None:
    op.drop_index("ix_cases_restricted_id", table_name="cases")
    op.drop_index("ix_cases_trashed_id", table_name="cases")
    op.create_index(
        "ix_custom_field_values_number", "custom_field_values", ["field_id", "value_number", "case_id"]
    )
    op.create_index("ix_custom_field_values_text", "custom_field_values", ["field_id", "value_text", "case_id"])
    op.drop_index("ix_custom_field_values_number_created", table_name="custom_field_values")
    op.drop_index("ix_custom_field_values_text_created", table_name="custom_field_values")
    op.drop_column("custom_field_values", "case_created_at")
