"""custom fields and field sets (with their typed value index), matter templates, bulk jobs

Revision ID: 0020
Revises: 0018
Create Date: 2026-11-27 15:30:00

Issue 27 (docs/decisions/0025-custom-fields-and-templates.md). Expand-only (docs/upgrading.md):
new tables, and a nullable `custom_fields` JSON column on `cases` and `contacts` that a previous
release's process neither reads nor writes (its rows have none: no values).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import casefile.db

revision: str = "0020"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _stamps() -> list[sa.Column[object]]:
    return [
        sa.Column("created_by", sa.String(length=40), nullable=True),
        sa.Column("created_at", casefile.db.UTCDateTime(), nullable=False),
        sa.Column("updated_at", casefile.db.UTCDateTime(), nullable=False),
    ]


def upgrade() -> None:
    op.add_column("cases", sa.Column("custom_fields", sa.JSON(), nullable=True))
    op.add_column("contacts", sa.Column("custom_fields", sa.JSON(), nullable=True))
    op.add_column("cases", sa.Column("tags", sa.JSON(), nullable=True))
    op.add_column("cases", sa.Column("template_id", sa.String(length=64), nullable=True))
    op.add_column("cases", sa.Column("template_version", sa.Integer(), nullable=True))
    op.create_index(
        "ix_cases_id_live",
        "cases",
        ["id", "created_at"],
        postgresql_where=sa.text("deleted_at IS NULL"),
        sqlite_where=sa.text("deleted_at IS NULL"),
    )
    op.create_table(
        "custom_field_sets",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("entity", sa.String(length=20), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("case_types", sa.JSON(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        *_stamps(),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_custom_field_sets")),
    )
    op.create_table(
        "custom_fields",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("entity", sa.String(length=20), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("label", sa.String(length=200), nullable=False),
        sa.Column("field_type", sa.String(length=20), nullable=False),
        sa.Column("required", sa.Boolean(), nullable=False),
        sa.Column("required_for_statuses", sa.JSON(), nullable=False),
        sa.Column("default", sa.JSON(), nullable=True),
        sa.Column("choices", sa.JSON(), nullable=False),
        sa.Column("field_set_id", sa.String(length=40), nullable=True),
        sa.Column("position", sa.Integer(), nullable=False),
        *_stamps(),
        sa.ForeignKeyConstraint(
            ["field_set_id"],
            ["custom_field_sets.id"],
            name=op.f("fk_custom_fields_field_set_id_custom_field_sets"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_custom_fields")),
        sa.UniqueConstraint("entity", "name", name="uq_custom_fields_entity_name"),
    )
    op.create_index(op.f("ix_custom_fields_field_set_id"), "custom_fields", ["field_set_id"])
    op.create_table(
        "custom_field_values",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("field_id", sa.String(length=40), nullable=False),
        sa.Column("case_id", sa.String(length=40), nullable=True),
        sa.Column("contact_id", sa.String(length=40), nullable=True),
        sa.Column("value_text", sa.String(length=1000), nullable=True),
        sa.Column("value_number", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(
            ["field_id"], ["custom_fields.id"], name=op.f("fk_custom_field_values_field_id_custom_fields"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["case_id"], ["cases.id"], name=op.f("fk_custom_field_values_case_id_cases"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["contact_id"], ["contacts.id"], name=op.f("fk_custom_field_values_contact_id_contacts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_custom_field_values")),
    )
    op.create_index(op.f("ix_custom_field_values_case_id"), "custom_field_values", ["case_id"])
    op.create_index(op.f("ix_custom_field_values_contact_id"), "custom_field_values", ["contact_id"])
    op.create_index("ix_custom_field_values_text", "custom_field_values", ["field_id", "value_text", "case_id"])
    op.create_index(
        "ix_custom_field_values_number", "custom_field_values", ["field_id", "value_number", "case_id"]
    )
    op.create_index(
        "ix_custom_field_values_contact_text", "custom_field_values", ["field_id", "value_text", "contact_id"]
    )

    op.create_table(
        "matter_templates",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("version", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("definition", sa.JSON(), nullable=False),
        sa.Column("created_by", sa.String(length=40), nullable=True),
        sa.Column("created_at", casefile.db.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", "version", name=op.f("pk_matter_templates")),
    )

    op.create_table(
        "bulk_jobs",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("action", sa.JSON(), nullable=False),
        sa.Column("case_ids", sa.JSON(), nullable=False),
        sa.Column("results", sa.JSON(), nullable=False),
        sa.Column("processed", sa.Integer(), nullable=False),
        sa.Column("succeeded", sa.Integer(), nullable=False),
        sa.Column("failed", sa.Integer(), nullable=False),
        sa.Column("acting_as", sa.JSON(), nullable=False),
        sa.Column("requested_by", sa.String(length=40), nullable=True),
        sa.Column("max_attempts", sa.Integer(), nullable=False),
        sa.Column("created_at", casefile.db.UTCDateTime(), nullable=False),
        sa.Column("updated_at", casefile.db.UTCDateTime(), nullable=False),
        sa.Column("finished_at", casefile.db.UTCDateTime(), nullable=True),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("attempts_made", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", casefile.db.UTCDateTime(), nullable=False),
        sa.Column("lease_expires_at", casefile.db.UTCDateTime(), nullable=True),
        sa.Column("lease_token", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_bulk_jobs")),
    )
    op.create_index(op.f("ix_bulk_jobs_requested_by"), "bulk_jobs", ["requested_by"])
    op.create_index(
        "ix_bulk_jobs_due",
        "bulk_jobs",
        ["next_attempt_at"],
        postgresql_where=sa.text("status IN ('pending', 'running')"),
        sqlite_where=sa.text("status IN ('pending', 'running')"),
    )


def downgrade() -> None:
    op.drop_table("bulk_jobs")
    op.drop_table("matter_templates")
    op.drop_table("custom_field_values")
    op.drop_table("custom_fields")
    op.drop_table("custom_field_sets")
    op.drop_column("contacts", "custom_fields")
    op.drop_index("ix_cases_id_live", table_name="cases")
    op.drop_column("cases", "template_version")
    op.drop_column("cases", "template_id")
    op.drop_column("cases", "tags")
    op.drop_column("cases", "custom_fields")
