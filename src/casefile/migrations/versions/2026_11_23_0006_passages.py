"""document_chunks is now passages: one name for passages in the code, the API and the schema

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23 00:30:00

The table `document_chunks` becomes `passages` and its column `chunk_index` becomes
`passage_index`; its constraints, indexes and full-text structures are renamed to match.

PostgreSQL renames in place (the generated `search_vector` column and its GIN index follow the
table; the id sequence keeps its value). SQLite cannot rename constraints, and an FTS5 table names
its content table in its definition, so the table is rebuilt: the FTS table and its triggers are
dropped, the rows copied into the new table with their ids (and the AUTOINCREMENT high-water mark,
so ids are never reused: the vector index relies on it), and the FTS table is made again and
rebuilt from the rows.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import casefile.db


revision: str = '0006'
down_revision: str | None = '0005'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD = ('document_chunks', 'chunk_index')
NEW = ('passages', 'passage_index')
COLUMNS = ('id', 'document_id', 'case_id', 'page', 'start', 'end', 'text', 'embedding', 'created_at')


def upgrade() -> None:
    _rename(OLD, NEW)


def downgrade() -> None:
    _rename(NEW, OLD)


def _rename(source: tuple[str, str], target: tuple[str, str]) -> None:
    if op.get_bind().dialect.name == 'postgresql':
        _rename_postgresql(source, target)
    else:
        _rebuild_sqlite(source, target)


def _rename_postgresql(source: tuple[str, str], target: tuple[str, str]) -> None:
    (old, old_index), (new, new_index) = source, target
    op.execute(f'ALTER TABLE {old} RENAME TO {new}')
    op.execute(f'ALTER TABLE {new} RENAME COLUMN {old_index} TO {new_index}')
    op.execute(f'ALTER TABLE {new} RENAME CONSTRAINT pk_{old} TO pk_{new}')
    op.execute(
        f'ALTER TABLE {new} RENAME CONSTRAINT fk_{old}_document_id_documents TO fk_{new}_document_id_documents'
    )
    for suffix in ('case_id', 'document_id', 'search_vector'):
        op.execute(f'ALTER INDEX ix_{old}_{suffix} RENAME TO ix_{new}_{suffix}')
    op.execute(f'ALTER SEQUENCE {old}_id_seq RENAME TO {new}_id_seq')


def _rebuild_sqlite(source: tuple[str, str], target: tuple[str, str]) -> None:
    (old, old_index), (new, new_index) = source, target
    for trigger in (f'{old}_fts_insert', f'{old}_fts_delete'):
        op.execute(f'DROP TRIGGER {trigger}')
    op.execute(f'DROP TABLE {old}_fts')
    _create_table(new, new_index)
    columns = ', '.join(f'"{c}"' for c in COLUMNS)
    op.execute(
        f'INSERT INTO {new} ({columns}, {new_index}) SELECT {columns}, {old_index} FROM {old} ORDER BY id'
    )
    op.execute(f"DELETE FROM sqlite_sequence WHERE name = '{new}'")
    op.execute(f"INSERT INTO sqlite_sequence (name, seq) SELECT '{new}', seq FROM sqlite_sequence WHERE name = '{old}'")
    op.drop_table(old)  # its indexes and its sqlite_sequence row go with it
    with op.batch_alter_table(new, schema=None) as batch_op:
        batch_op.create_index(batch_op.f(f'ix_{new}_case_id'), ['case_id'], unique=False)
        batch_op.create_index(batch_op.f(f'ix_{new}_document_id'), ['document_id'], unique=False)
    # As in 0005: external content keyed by the passage's integer primary key; passages are only
    # inserted and deleted (re-processing replaces them), never updated.
    op.execute(
        f"CREATE VIRTUAL TABLE {new}_fts USING fts5("
        f"text, content='{new}', content_rowid='id', "
        "tokenize='porter unicode61 remove_diacritics 2')"
    )
    op.execute(
        f"CREATE TRIGGER {new}_fts_insert AFTER INSERT ON {new} BEGIN "
        f"INSERT INTO {new}_fts(rowid, text) VALUES (new.id, new.text); END"
    )
    op.execute(
        f"CREATE TRIGGER {new}_fts_delete AFTER DELETE ON {new} BEGIN "
        f"INSERT INTO {new}_fts({new}_fts, rowid, text) VALUES ('delete', old.id, old.text); END"
    )
    op.execute(f"INSERT INTO {new}_fts({new}_fts) VALUES ('rebuild')")


def _create_table(name: str, index_column: str) -> None:
    op.create_table(name,
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('document_id', sa.String(length=40), nullable=False),
    sa.Column('case_id', sa.String(length=40), nullable=False),
    sa.Column(index_column, sa.Integer(), nullable=False),
    sa.Column('page', sa.Integer(), nullable=False),
    sa.Column('start', sa.Integer(), nullable=False),
    sa.Column('end', sa.Integer(), nullable=False),
    sa.Column('text', sa.Text(), nullable=False),
    sa.Column('embedding', sa.LargeBinary(), nullable=False),
    sa.Column('created_at', casefile.db.UTCDateTime(), nullable=False),
    sa.ForeignKeyConstraint(['document_id'], ['documents.id'], name=op.f(f'fk_{name}_document_id_documents'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f(f'pk_{name}')),
    sqlite_autoincrement=True,
    )
