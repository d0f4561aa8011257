"""Contact name keys fold look-alike letters (Unicode TR39 skeletons)

Revision ID: 0018
Revises: 0022 (written on 0017; re-chained after 0019 and 0022 landed, so that there is one head)
Create Date: 2026-11-27 16:00:00

No schema change. `contact_names.key` (what conflict checks compare and contact search looks in)
is now computed after folding confusable letters to one prototype (casefile.nlp.name_keys): a
contact written "Асmе" with Cyrillic А and с has the key "acme". The keys stored before are
recomputed here, with their lengths; a key that does not change is not written. A previous release
still running during a rolling upgrade writes keys without the fold for the contacts it saves;
they match as before and are folded by the next contact update (or by running this again after
a downgrade).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from casefile.nlp.name_keys import name_key

revision: str = "0018"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BATCH = 5000


def upgrade() -> None:
    bind = op.get_bind()
    names = sa.table(
        "contact_names",
        sa.column("id", sa.Integer),
        sa.column("name", sa.String),
        sa.column("key", sa.String),
        sa.column("key_length", sa.Integer),
    )
    last = -1
    while True:
        rows = bind.execute(
            sa.select(names.c.id, names.c.name, names.c.key)
            .where(names.c.id > last)
            .order_by(names.c.id)
            .limit(_BATCH)
        ).all()
        if not rows:
            return
        changed = [
            {"row_id": row_id, "new_key": name_key(name), "new_length": len(name_key(name))}
            for row_id, name, key in rows
            if name_key(name) != key
        ]
        if changed:
            bind.execute(
                names.update()
                .where(names.c.id == sa.bindparam("row_id"))
                .values(key=sa.bindparam("new_key"), key_length=sa.bindparam("new_length")),
                changed,
            )
        last = rows[-1][0]


def downgrade() -> None:
    """Nothing to undo: the folded keys match as well under the previous release's rules for
    every name without look-alike letters, and those it recomputes when a contact is saved."""
