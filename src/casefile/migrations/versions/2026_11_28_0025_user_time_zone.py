"""users: each account's time zone for the web app (docs/web-app.md#time-zones)

Revision ID: 0025
Revises: 0024
Create Date: 2026-11-28 02:00:00

Expand-only (docs/upgrading.md): one nullable column. NULL means "the browser's own zone",
which the web app learns from the browser on each device.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0025"
down_revision: str | None = "0024"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("users", sa.Column("time_zone", sa.String(length=64), nullable=True))


def downgrade() -> None:
    op.drop_column("users", "time_zone")
