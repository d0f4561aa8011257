"""tasks, saved deadlines, the firm's deadline rule sets, calendar feed tokens

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-23 03:30:00

Tasks on cases (a due date or date-time, reminders, a link to the saved deadline they come from),
deadlines saved from a rule-set computation (one per case, rule set and trigger), rule sets the
firm adds through the API (the shipped ones are files), and each user's calendar feed token
(its SHA-256 only).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import casefile.db

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "deadline_rule_sets",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("definition", sa.JSON(), nullable=False),
        sa.Column("created_by", sa.String(length=40), nullable=True),
        sa.Column("created_at", casefile.db.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_deadline_rule_sets")),
    )
    op.create_table(
        "deadlines",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("case_id", sa.String(length=40), nullable=False),
        sa.Column("rule_set", sa.String(length=64), nullable=False),
        sa.Column("rule_set_version", sa.String(length=40), nullable=False),
        sa.Column("trigger", sa.String(length=64), nullable=False),
        sa.Column("trigger_date", sa.Date(), nullable=False),
        sa.Column("created_by", sa.String(length=40), nullable=True),
        sa.Column("created_at", casefile.db.UTCDateTime(), nullable=False),
        sa.Column("updated_at", casefile.db.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["case_id"], ["cases.id"], name=op.f("fk_deadlines_case_id_cases"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_deadlines")),
        sa.UniqueConstraint("case_id", "rule_set", "trigger", name="uq_deadlines_case_trigger"),
    )
    op.create_table(
        "tasks",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("case_id", sa.String(length=40), nullable=False),
        sa.Column("title", sa.String(length=500), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("assignee_id", sa.String(length=40), nullable=True),
        sa.Column("due_date", sa.Date(), nullable=True),
        sa.Column("due_datetime", casefile.db.UTCDateTime(), nullable=True),
        sa.Column("due_sort", casefile.db.UTCDateTime(), nullable=False),
        sa.Column("priority", sa.String(length=20), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("reminders", sa.JSON(), nullable=False),
        sa.Column("deadline_id", sa.String(length=40), nullable=True),
        sa.Column("rule_id", sa.String(length=64), nullable=True),
        sa.Column("created_by", sa.String(length=40), nullable=True),
        sa.Column("created_at", casefile.db.UTCDateTime(), nullable=False),
        sa.Column("updated_at", casefile.db.UTCDateTime(), nullable=False),
        sa.Column("completed_at", casefile.db.UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["case_id"], ["cases.id"], name=op.f("fk_tasks_case_id_cases"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["assignee_id"], ["users.id"], name=op.f("fk_tasks_assignee_id_users"), ondelete="SET NULL"
        ),
        sa.ForeignKeyConstraint(
            ["deadline_id"], ["deadlines.id"], name=op.f("fk_tasks_deadline_id_deadlines"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tasks")),
    )
    op.create_index("ix_tasks_case_id_due_sort", "tasks", ["case_id", "due_sort", "id"])
    op.create_index("ix_tasks_assignee_status_due_sort", "tasks", ["assignee_id", "status", "due_sort", "id"])
    op.create_index("ix_tasks_deadline_id", "tasks", ["deadline_id"])
    op.create_table(
        "calendar_tokens",
        sa.Column("user_id", sa.String(length=40), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", casefile.db.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_calendar_tokens_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("user_id", name=op.f("pk_calendar_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_calendar_tokens_token_hash")),
    )


def downgrade() -> None:
    op.drop_table("calendar_tokens")
    op.drop_index("ix_tasks_deadline_id", table_name="tasks")
    op.drop_index("ix_tasks_assignee_status_due_sort", table_name="tasks")
    op.drop_index("ix_tasks_case_id_due_sort", table_name="tasks")
    op.drop_table("tasks")
    op.drop_table("deadlines")
    op.drop_table("deadline_rule_sets")
