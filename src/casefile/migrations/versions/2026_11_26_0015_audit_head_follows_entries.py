"""audit_chain_head follows the entries inserted (a trigger on audit_entries)

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-26 02:00:00

Appending to the audit chain was three statements under the head's lock: read the head, insert
the entries, move the head. The head now moves with the INSERT itself, so an append is two, and
on PostgreSQL the head's lock is held one round trip less (docs/decisions/0016-hot-path.md). The
head only moves forward: an entry inserted with a lower `seq` than the head's (an entry deleted by
hand and put back from an export) leaves it where it is.

PostgreSQL: one statement-level trigger over the statement's new rows; SQLite: a row trigger (it
has no statement-level triggers; each firing is one in-process UPDATE of one row).
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            """
            CREATE FUNCTION audit_head_follow() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                UPDATE audit_chain_head AS head
                SET last_seq = newest.seq, last_hash = newest.hash
                FROM (SELECT seq, hash FROM appended ORDER BY seq DESC LIMIT 1) AS newest
                WHERE head.id = 1 AND newest.seq > head.last_seq;
                RETURN NULL;
            END
            $$
            """
        )
        op.execute(
            "CREATE TRIGGER audit_head_follow AFTER INSERT ON audit_entries "
            "REFERENCING NEW TABLE AS appended FOR EACH STATEMENT EXECUTE FUNCTION audit_head_follow()"
        )
    else:
        op.execute(
            "CREATE TRIGGER audit_head_follow AFTER INSERT ON audit_entries BEGIN "
            "UPDATE audit_chain_head SET last_seq = new.seq, last_hash = new.hash "
            "WHERE id = 1 AND new.seq > last_seq; END"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER audit_head_follow ON audit_entries")
        op.execute("DROP FUNCTION audit_head_follow()")
    else:
        op.execute("DROP TRIGGER audit_head_follow")
