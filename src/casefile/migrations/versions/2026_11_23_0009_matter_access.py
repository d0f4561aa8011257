"""Matter access: cases.access, case grants and walls, groups, API keys limited to cases;
ai_jobs.started_at

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-23 03:10:00

Every existing case becomes a `firm` case (what it was in effect: every user whose role permits
it could see it), so nobody loses or gains access by upgrading.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from casefile.db import UTCDateTime

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("cases", sa.Column("access", sa.String(length=20), nullable=False, server_default="firm"))
    op.add_column("api_keys", sa.Column("case_ids", sa.JSON(), nullable=True))
    # When a job's first attempt started (GET /jobs/{id}); unknown for jobs from before.
    op.add_column("ai_jobs", sa.Column("started_at", UTCDateTime(), nullable=True))
    op.create_table(
        "groups",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("description", sa.String(length=2000), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_groups")),
    )
    op.create_index("uq_groups_name_lower", "groups", [sa.text("lower(name)")], unique=True)
    op.create_table(
        "group_members",
        sa.Column("group_id", sa.String(length=40), nullable=False),
        sa.Column("user_id", sa.String(length=40), nullable=False),
        sa.ForeignKeyConstraint(
            ["group_id"], ["groups.id"], name=op.f("fk_group_members_group_id_groups"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_group_members_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("group_id", "user_id", name=op.f("pk_group_members")),
    )
    op.create_index(op.f("ix_group_members_user_id"), "group_members", ["user_id"])
    for table in ("case_grants", "case_walls"):
        extra = (
            [
                sa.Column("level", sa.String(length=10), nullable=False),
                sa.Column("granted_by", sa.String(length=40), nullable=True),
                sa.Column("granted_at", UTCDateTime(), nullable=False),
            ]
            if table == "case_grants"
            else [
                sa.Column("reason", sa.String(length=1000), nullable=True),
                sa.Column("created_by", sa.String(length=40), nullable=True),
                sa.Column("created_at", UTCDateTime(), nullable=False),
            ]
        )
        op.create_table(
            table,
            sa.Column("case_id", sa.String(length=40), nullable=False),
            sa.Column("subject_type", sa.String(length=10), nullable=False),
            sa.Column("subject_id", sa.String(length=40), nullable=False),
            *extra,
            sa.ForeignKeyConstraint(
                ["case_id"], ["cases.id"], name=op.f(f"fk_{table}_case_id_cases"), ondelete="CASCADE"
            ),
            sa.PrimaryKeyConstraint("case_id", "subject_type", "subject_id", name=op.f(f"pk_{table}")),
        )
        op.create_index(f"ix_{table}_subject", table, ["subject_type", "subject_id", "case_id"])


def downgrade() -> None:
    for table in ("case_walls", "case_grants"):
        op.drop_index(f"ix_{table}_subject", table_name=table)
        op.drop_table(table)
    op.drop_index(op.f("ix_group_members_user_id"), table_name="group_members")
    op.drop_table("group_members")
    op.drop_index("uq_groups_name_lower", table_name="groups")
    op.drop_table("groups")
    op.drop_column("ai_jobs", "started_at")
    op.drop_column("api_keys", "case_ids")
    op.drop_column("cases", "access")
