"""documents.uploaded_via_key; case_type and jurisdiction indexed on lower()

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23 01:40:00

A document uploaded with an API key names a user in `uploaded_by` (the key's creator) and the key
in the new column `uploaded_via_key`. Existing rows whose `uploaded_by` is a key id (`key_…`) move
it to `uploaded_via_key` and take the key's creator as `uploaded_by` (NULL when the key or its
creator is gone: no user can be named).

The case list's `case_type` and `jurisdiction` filters ignore case (they compare `lower()`), so
their indexes are on `lower(…)` now, on both databases.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

KEY_UPLOADS = "uploaded_by LIKE 'key\\_%' ESCAPE '\\'"


def upgrade() -> None:
    op.add_column("documents", sa.Column("uploaded_via_key", sa.String(length=40), nullable=True))
    # Both databases evaluate every SET expression on the row as it was.
    op.execute(
        "UPDATE documents SET uploaded_via_key = uploaded_by,"
        " uploaded_by = (SELECT api_keys.created_by FROM api_keys WHERE api_keys.id = documents.uploaded_by)"
        f" WHERE {KEY_UPLOADS}"
    )
    op.drop_index("ix_cases_case_type_created_at", table_name="cases")
    op.drop_index("ix_cases_jurisdiction", table_name="cases")
    op.create_index(
        "ix_cases_case_type_lower_created_at", "cases", [sa.text("lower(case_type)"), "created_at", "id"]
    )
    op.create_index("ix_cases_jurisdiction_lower", "cases", [sa.text("lower(jurisdiction)")])


def downgrade() -> None:
    op.drop_index("ix_cases_jurisdiction_lower", table_name="cases")
    op.drop_index("ix_cases_case_type_lower_created_at", table_name="cases")
    op.create_index("ix_cases_jurisdiction", "cases", ["jurisdiction"])
    op.create_index("ix_cases_case_type_created_at", "cases", ["case_type", "created_at", "id"])
    op.execute("UPDATE documents SET uploaded_by = uploaded_via_key WHERE uploaded_via_key IS NOT NULL")
    op.drop_column("documents", "uploaded_via_key")
