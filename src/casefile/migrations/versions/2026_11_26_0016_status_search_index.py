"""One GIN index over (status, search_vector) for every case search (PostgreSQL only)

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-26 05:00:00

`GET /cases?search=…&status=…` was answered by two bitmaps ANDed: every case holding the words
(168,107 rows for `discovery` in 1,000,000) and every case of the status (69,204 for `intake`),
each built whole before the AND, and with `work_mem` 4 MB both turned lossy, so most heap pages
of the status were read and rechecked row by row (docs/research/bench-notes-2026-11.md, "Issue 16: a status and a
search in one index"). One GIN index over both columns intersects their posting lists inside the
index: the bitmap holds only the 11,878 cases that match both, it stays exact, and the heap
pages read are those of the matches.

It replaces `ix_cases_search_vector`: a multicolumn GIN index answers a condition on any subset of
its columns as well as a one-column index would (GIN keys are per column), so a search without a
status uses it too, and each write maintains one full-text index instead of two. Building it takes
about 25 s per million cases, during which writes to `cases` wait (as for 0014's backfill).

GIN indexes `status` (a varchar) through the `btree_gin` extension, from PostgreSQL's contrib and
trusted since PostgreSQL 13: the database's owner, or a role with CREATE on it, may install it
without being a superuser. Where it cannot be installed (contrib missing, e.g. a bare `postgres`
image build without it, or a role that may not create extensions) the migration logs a warning
that says why and what to run by hand, and changes nothing else: `ix_cases_search_vector` stays and
searches give the same results as before, slower with a status filter. A later `casefile migrate`
does not try again (the revision is recorded as applied).

SQLite searches through FTS5 (`cases_fts`) and needs none of this.
"""

import logging
from collections.abc import Sequence

from alembic import op
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INDEX = "ix_cases_status_search_vector"
CREATE_INDEX = f"CREATE INDEX IF NOT EXISTS {INDEX} ON cases USING gin (status, search_vector)"
REPLACED = "ix_cases_search_vector"

log = logging.getLogger("alembic.runtime.migration")


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    if bind.scalar(text("SELECT 1 FROM pg_extension WHERE extname = 'btree_gin'")) is None:
        reason = _install_btree_gin()
        if reason is not None:
            log.warning(
                "%s is not created (%s): searches with a status filter are slower, results are the "
                "same. To add it later, as a role that may: CREATE EXTENSION btree_gin; %s; "
                "DROP INDEX %s",
                INDEX,
                reason,
                CREATE_INDEX,
                REPLACED,
            )
            return
    op.execute(CREATE_INDEX)
    op.execute(f"DROP INDEX IF EXISTS {REPLACED}")


def _install_btree_gin() -> str | None:
    """Install btree_gin; None when done, else why not (the transaction goes on either way)."""
    bind = op.get_bind()
    if bind.scalar(text("SELECT 1 FROM pg_available_extensions WHERE name = 'btree_gin'")) is None:
        return "the btree_gin extension is not available: PostgreSQL's contrib is not installed"
    try:
        with bind.begin_nested():
            bind.execute(text("CREATE EXTENSION IF NOT EXISTS btree_gin"))
    except DBAPIError as exc:
        return f"CREATE EXTENSION btree_gin failed: {str(exc.orig).strip()}"
    return None


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    # The extension stays: something else may use it by now.
    op.execute(f"CREATE INDEX IF NOT EXISTS {REPLACED} ON cases USING gin (search_vector)")
    op.execute(f"DROP INDEX IF EXISTS {INDEX}")
