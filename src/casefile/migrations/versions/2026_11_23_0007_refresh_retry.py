"""refresh_tokens.retry_pair_sealed: the pair a refresh token was exchanged for, for a retry

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23 02:00:00

A client that retries a refresh (or two tabs refreshing at once) gets, within a few seconds, the
same new access and refresh token as the first request instead of ending its session. The pair is
kept encrypted (casefile.secretbox), never in plain text; NULL for rows written before.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0007'
down_revision: str | None = '0006'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('refresh_tokens', schema=None) as batch_op:
        batch_op.add_column(sa.Column('retry_pair_sealed', sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('refresh_tokens', schema=None) as batch_op:
        batch_op.drop_column('retry_pair_sealed')
