"""practice: contacts and their names, parties, conflict checks, notes and their versions

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-23 03:03:16

New tables only. `contact_names` holds each contact's name and aliases with their matching keys
(casefile.nlp.name_keys) and key lengths, which the conflict check reads by a window of lengths.
Existing cases keep their `client_name` without a client party (the party is made when a case is
created); conflict checks search client names directly, so they are found all the same.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import casefile.db


revision: str = '0012'
down_revision: str | None = '0011'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('conflict_checks',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('case_id', sa.String(length=40), nullable=True),
    sa.Column('names', sa.JSON(), nullable=False),
    sa.Column('hits', sa.JSON(), nullable=False),
    sa.Column('created_by', sa.String(length=40), nullable=True),
    sa.Column('created_at', casefile.db.UTCDateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_conflict_checks'))
    )
    with op.batch_alter_table('conflict_checks', schema=None) as batch_op:
        batch_op.create_index('ix_conflict_checks_case_id_created_at', ['case_id', 'created_at', 'id'], unique=False)
        batch_op.create_index('ix_conflict_checks_created_at_id', ['created_at', 'id'], unique=False)

    op.create_table('contacts',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('kind', sa.String(length=20), nullable=False),
    sa.Column('name', sa.String(length=300), nullable=False),
    sa.Column('aliases', sa.JSON(), nullable=False),
    sa.Column('emails', sa.JSON(), nullable=False),
    sa.Column('phones', sa.JSON(), nullable=False),
    sa.Column('addresses', sa.JSON(), nullable=False),
    sa.Column('identifiers', sa.JSON(), nullable=False),
    sa.Column('tags', sa.JSON(), nullable=False),
    sa.Column('notes', sa.Text(), nullable=True),
    sa.Column('created_by', sa.String(length=40), nullable=True),
    sa.Column('created_at', casefile.db.UTCDateTime(), nullable=False),
    sa.Column('updated_at', casefile.db.UTCDateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_contacts'))
    )
    with op.batch_alter_table('contacts', schema=None) as batch_op:
        batch_op.create_index('ix_contacts_created_at_id', ['created_at', 'id'], unique=False)
        batch_op.create_index('ix_contacts_kind_created_at', ['kind', 'created_at', 'id'], unique=False)
        batch_op.create_index('ix_contacts_name_lower_id', [sa.text('lower(name)'), 'id'], unique=False)
        batch_op.create_index('ix_contacts_updated_at_id', ['updated_at', 'id'], unique=False)

    op.create_table('contact_names',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('contact_id', sa.String(length=40), nullable=False),
    sa.Column('source', sa.String(length=10), nullable=False),
    sa.Column('name', sa.String(length=300), nullable=False),
    sa.Column('key', sa.String(length=300), nullable=False),
    sa.Column('key_length', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['contact_id'], ['contacts.id'], name=op.f('fk_contact_names_contact_id_contacts'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_contact_names')),
    sqlite_autoincrement=True
    )
    with op.batch_alter_table('contact_names', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_contact_names_contact_id'), ['contact_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_contact_names_key'), ['key'], unique=False)
        batch_op.create_index('ix_contact_names_key_length_key', ['key_length', 'key'], unique=False)

    op.create_table('notes',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('case_id', sa.String(length=40), nullable=True),
    sa.Column('contact_id', sa.String(length=40), nullable=True),
    sa.Column('author_id', sa.String(length=40), nullable=True),
    sa.Column('body', sa.Text(), nullable=False),
    sa.Column('format', sa.String(length=20), nullable=False),
    sa.Column('pinned', sa.Boolean(), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('created_at', casefile.db.UTCDateTime(), nullable=False),
    sa.Column('updated_at', casefile.db.UTCDateTime(), nullable=False),
    sa.ForeignKeyConstraint(['case_id'], ['cases.id'], name=op.f('fk_notes_case_id_cases'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['contact_id'], ['contacts.id'], name=op.f('fk_notes_contact_id_contacts'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_notes'))
    )
    with op.batch_alter_table('notes', schema=None) as batch_op:
        batch_op.create_index('ix_notes_case_id_created_at', ['case_id', 'created_at', 'id'], unique=False)
        batch_op.create_index('ix_notes_contact_id_created_at', ['contact_id', 'created_at', 'id'], unique=False)

    op.create_table('parties',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('case_id', sa.String(length=40), nullable=False),
    sa.Column('contact_id', sa.String(length=40), nullable=False),
    sa.Column('role', sa.String(length=40), nullable=False),
    sa.Column('starts_on', sa.Date(), nullable=True),
    sa.Column('ends_on', sa.Date(), nullable=True),
    sa.Column('conflict_check_id', sa.String(length=40), nullable=True),
    sa.Column('created_by', sa.String(length=40), nullable=True),
    sa.Column('created_at', casefile.db.UTCDateTime(), nullable=False),
    sa.ForeignKeyConstraint(['case_id'], ['cases.id'], name=op.f('fk_parties_case_id_cases'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['contact_id'], ['contacts.id'], name=op.f('fk_parties_contact_id_contacts'), ondelete='RESTRICT'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_parties')),
    sa.UniqueConstraint('case_id', 'contact_id', 'role', name=op.f('uq_parties_case_id_contact_id_role'))
    )
    with op.batch_alter_table('parties', schema=None) as batch_op:
        batch_op.create_index('ix_parties_case_id_created_at', ['case_id', 'created_at', 'id'], unique=False)
        batch_op.create_index(batch_op.f('ix_parties_contact_id'), ['contact_id'], unique=False)

    op.create_table('note_versions',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('note_id', sa.String(length=40), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('body', sa.Text(), nullable=False),
    sa.Column('format', sa.String(length=20), nullable=False),
    sa.Column('pinned', sa.Boolean(), nullable=False),
    sa.Column('edited_by', sa.String(length=40), nullable=True),
    sa.Column('edited_at', casefile.db.UTCDateTime(), nullable=False),
    sa.ForeignKeyConstraint(['note_id'], ['notes.id'], name=op.f('fk_note_versions_note_id_notes'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_note_versions')),
    sa.UniqueConstraint('note_id', 'version', name=op.f('uq_note_versions_note_id_version')),
    sqlite_autoincrement=True
    )


def downgrade() -> None:
    op.drop_table('note_versions')
    with op.batch_alter_table('parties', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_parties_contact_id'))
        batch_op.drop_index('ix_parties_case_id_created_at')

    op.drop_table('parties')
    with op.batch_alter_table('notes', schema=None) as batch_op:
        batch_op.drop_index('ix_notes_contact_id_created_at')
        batch_op.drop_index('ix_notes_case_id_created_at')

    op.drop_table('notes')
    with op.batch_alter_table('contact_names', schema=None) as batch_op:
        batch_op.drop_index('ix_contact_names_key_length_key')
        batch_op.drop_index(batch_op.f('ix_contact_names_key'))
        batch_op.drop_index(batch_op.f('ix_contact_names_contact_id'))

    op.drop_table('contact_names')
    with op.batch_alter_table('contacts', schema=None) as batch_op:
        batch_op.drop_index('ix_contacts_updated_at_id')
        batch_op.drop_index('ix_contacts_kind_created_at')
        batch_op.drop_index('ix_contacts_name_lower_id')
        batch_op.drop_index('ix_contacts_created_at_id')

    op.drop_table('contacts')
    with op.batch_alter_table('conflict_checks', schema=None) as batch_op:
        batch_op.drop_index('ix_conflict_checks_created_at_id')
        batch_op.drop_index('ix_conflict_checks_case_id_created_at')

    op.drop_table('conflict_checks')
