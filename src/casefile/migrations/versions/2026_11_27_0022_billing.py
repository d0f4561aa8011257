"""billing and trust money: rates, time entries, timers, expenses, invoices and their lines and
payments, the invoice counter, the trust journal and each matter's trust balance

Revision ID: 0022
Revises: 0019
Create Date: 2026-11-27 16:00:00

Expand-only (docs/upgrading.md): new tables, nothing of the previous release's changes. Amounts
are BIGINT minor units with a CHAR(3) currency (casefile/money.py); `trust_balances` has a CHECK
that a balance is never below zero (docs/decisions/0027-billing-and-trust.md).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import casefile.db

revision: str = "0022"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('invoice_counters',
    sa.Column('id', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('last_value', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_invoice_counters'))
    )
    op.create_table('billing_rates',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('user_id', sa.String(length=40), nullable=False),
    sa.Column('contact_id', sa.String(length=40), nullable=True),
    sa.Column('case_id', sa.String(length=40), nullable=True),
    sa.Column('rate_minor', sa.BigInteger(), nullable=False),
    sa.Column('currency', sa.String(length=3), nullable=False),
    sa.Column('updated_by', sa.String(length=40), nullable=True),
    sa.Column('updated_at', casefile.db.UTCDateTime(), nullable=False),
    sa.ForeignKeyConstraint(['case_id'], ['cases.id'], name=op.f('fk_billing_rates_case_id_cases'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['contact_id'], ['contacts.id'], name=op.f('fk_billing_rates_contact_id_contacts'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_billing_rates_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_billing_rates')),
    sa.UniqueConstraint('user_id', 'contact_id', 'case_id', name='uq_billing_rates_scope')
    )
    op.create_index(op.f('ix_billing_rates_user_id'), 'billing_rates', ['user_id'], unique=False)
    op.create_table('invoices',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('case_id', sa.String(length=40), nullable=False),
    sa.Column('number', sa.String(length=40), nullable=True),
    sa.Column('state', sa.String(length=10), nullable=False),
    sa.Column('currency', sa.String(length=3), nullable=False),
    sa.Column('period_start', sa.Date(), nullable=False),
    sa.Column('period_end', sa.Date(), nullable=False),
    sa.Column('discount_percent', sa.String(length=12), nullable=False),
    sa.Column('tax_percent', sa.String(length=12), nullable=False),
    sa.Column('subtotal_minor', sa.BigInteger(), nullable=False),
    sa.Column('discount_minor', sa.BigInteger(), nullable=False),
    sa.Column('write_off_minor', sa.BigInteger(), nullable=False),
    sa.Column('tax_minor', sa.BigInteger(), nullable=False),
    sa.Column('total_minor', sa.BigInteger(), nullable=False),
    sa.Column('paid_minor', sa.BigInteger(), nullable=False),
    sa.Column('issued_on', sa.Date(), nullable=True),
    sa.Column('due_on', sa.Date(), nullable=True),
    sa.Column('created_by', sa.String(length=40), nullable=True),
    sa.Column('approved_by', sa.String(length=40), nullable=True),
    sa.Column('created_at', casefile.db.UTCDateTime(), nullable=False),
    sa.Column('updated_at', casefile.db.UTCDateTime(), nullable=False),
    sa.ForeignKeyConstraint(['case_id'], ['cases.id'], name=op.f('fk_invoices_case_id_cases'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_invoices')),
    sa.UniqueConstraint('number', name=op.f('uq_invoices_number'))
    )
    op.create_index(op.f('ix_invoices_case_id'), 'invoices', ['case_id'], unique=False)
    op.create_table('time_entries',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('case_id', sa.String(length=40), nullable=False),
    sa.Column('user_id', sa.String(length=40), nullable=False),
    sa.Column('work_date', sa.Date(), nullable=False),
    sa.Column('seconds', sa.Integer(), nullable=False),
    sa.Column('billed_seconds', sa.Integer(), nullable=False),
    sa.Column('increment_seconds', sa.Integer(), nullable=False),
    sa.Column('description', sa.Text(), nullable=False),
    sa.Column('billable', sa.Boolean(), nullable=False),
    sa.Column('rate_minor', sa.BigInteger(), nullable=False),
    sa.Column('rate_source', sa.String(length=10), nullable=False),
    sa.Column('amount_minor', sa.BigInteger(), nullable=False),
    sa.Column('currency', sa.String(length=3), nullable=False),
    sa.Column('task_code', sa.String(length=10), nullable=True),
    sa.Column('activity_code', sa.String(length=10), nullable=True),
    sa.Column('state', sa.String(length=10), nullable=False),
    sa.Column('invoice_id', sa.String(length=40), nullable=True),
    sa.Column('created_by', sa.String(length=40), nullable=True),
    sa.Column('created_at', casefile.db.UTCDateTime(), nullable=False),
    sa.Column('updated_at', casefile.db.UTCDateTime(), nullable=False),
    sa.ForeignKeyConstraint(['case_id'], ['cases.id'], name=op.f('fk_time_entries_case_id_cases'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_time_entries'))
    )
    op.create_index('ix_time_entries_case_id_work_date', 'time_entries', ['case_id', 'work_date', 'id'], unique=False)
    op.create_index(op.f('ix_time_entries_invoice_id'), 'time_entries', ['invoice_id'], unique=False)
    op.create_index('ix_time_entries_user_id_work_date', 'time_entries', ['user_id', 'work_date', 'id'], unique=False)
    op.create_table('timers',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('user_id', sa.String(length=40), nullable=False),
    sa.Column('case_id', sa.String(length=40), nullable=False),
    sa.Column('description', sa.Text(), nullable=False),
    sa.Column('accumulated_seconds', sa.Integer(), nullable=False),
    sa.Column('running_since', casefile.db.UTCDateTime(), nullable=True),
    sa.Column('created_at', casefile.db.UTCDateTime(), nullable=False),
    sa.ForeignKeyConstraint(['case_id'], ['cases.id'], name=op.f('fk_timers_case_id_cases'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_timers'))
    )
    op.create_index(op.f('ix_timers_user_id'), 'timers', ['user_id'], unique=False)
    op.create_table('trust_balances',
    sa.Column('case_id', sa.String(length=40), nullable=False),
    sa.Column('currency', sa.String(length=3), nullable=False),
    sa.Column('balance_minor', sa.BigInteger(), nullable=False),
    sa.Column('updated_at', casefile.db.UTCDateTime(), nullable=False),
    sa.CheckConstraint('balance_minor >= 0', name=op.f('ck_trust_balances_not_negative')),
    sa.ForeignKeyConstraint(['case_id'], ['cases.id'], name=op.f('fk_trust_balances_case_id_cases'), ondelete='RESTRICT'),
    sa.PrimaryKeyConstraint('case_id', 'currency', name=op.f('pk_trust_balances'))
    )
    op.create_table('trust_entries',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('case_id', sa.String(length=40), nullable=False),
    sa.Column('contact_id', sa.String(length=40), nullable=True),
    sa.Column('kind', sa.String(length=12), nullable=False),
    sa.Column('amount_minor', sa.BigInteger(), nullable=False),
    sa.Column('currency', sa.String(length=3), nullable=False),
    sa.Column('entry_date', sa.Date(), nullable=False),
    sa.Column('reference', sa.String(length=200), nullable=False),
    sa.Column('description', sa.Text(), nullable=False),
    sa.Column('invoice_id', sa.String(length=40), nullable=True),
    sa.Column('reverses_id', sa.String(length=40), nullable=True),
    sa.Column('balance_after_minor', sa.BigInteger(), nullable=False),
    sa.Column('recorded_by', sa.String(length=40), nullable=True),
    sa.Column('recorded_at', casefile.db.UTCDateTime(), nullable=False),
    sa.ForeignKeyConstraint(['case_id'], ['cases.id'], name=op.f('fk_trust_entries_case_id_cases'), ondelete='RESTRICT'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_trust_entries')),
    sa.UniqueConstraint('reverses_id', name=op.f('uq_trust_entries_reverses_id'))
    )
    op.create_index('ix_trust_entries_case_id_entry_date', 'trust_entries', ['case_id', 'entry_date', 'id'], unique=False)
    op.create_index(op.f('ix_trust_entries_contact_id'), 'trust_entries', ['contact_id'], unique=False)
    op.create_table('expenses',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('case_id', sa.String(length=40), nullable=False),
    sa.Column('user_id', sa.String(length=40), nullable=True),
    sa.Column('spent_on', sa.Date(), nullable=False),
    sa.Column('amount_minor', sa.BigInteger(), nullable=False),
    sa.Column('currency', sa.String(length=3), nullable=False),
    sa.Column('category', sa.String(length=100), nullable=False),
    sa.Column('description', sa.Text(), nullable=False),
    sa.Column('expense_code', sa.String(length=10), nullable=True),
    sa.Column('receipt_document_id', sa.String(length=40), nullable=True),
    sa.Column('billable', sa.Boolean(), nullable=False),
    sa.Column('state', sa.String(length=10), nullable=False),
    sa.Column('invoice_id', sa.String(length=40), nullable=True),
    sa.Column('created_at', casefile.db.UTCDateTime(), nullable=False),
    sa.Column('updated_at', casefile.db.UTCDateTime(), nullable=False),
    sa.ForeignKeyConstraint(['case_id'], ['cases.id'], name=op.f('fk_expenses_case_id_cases'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['receipt_document_id'], ['documents.id'], name=op.f('fk_expenses_receipt_document_id_documents'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_expenses'))
    )
    op.create_index('ix_expenses_case_id_spent_on', 'expenses', ['case_id', 'spent_on', 'id'], unique=False)
    op.create_index(op.f('ix_expenses_invoice_id'), 'expenses', ['invoice_id'], unique=False)
    op.create_table('invoice_lines',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('invoice_id', sa.String(length=40), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=10), nullable=False),
    sa.Column('source_id', sa.String(length=40), nullable=False),
    sa.Column('work_date', sa.Date(), nullable=False),
    sa.Column('description', sa.Text(), nullable=False),
    sa.Column('user_id', sa.String(length=40), nullable=True),
    sa.Column('units', sa.String(length=20), nullable=False),
    sa.Column('unit_cost_minor', sa.BigInteger(), nullable=False),
    sa.Column('amount_minor', sa.BigInteger(), nullable=False),
    sa.Column('discount_minor', sa.BigInteger(), nullable=False),
    sa.Column('write_off_minor', sa.BigInteger(), nullable=False),
    sa.Column('task_code', sa.String(length=10), nullable=True),
    sa.Column('activity_code', sa.String(length=10), nullable=True),
    sa.Column('expense_code', sa.String(length=10), nullable=True),
    sa.ForeignKeyConstraint(['invoice_id'], ['invoices.id'], name=op.f('fk_invoice_lines_invoice_id_invoices'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_invoice_lines')),
    sa.UniqueConstraint('invoice_id', 'position', name=op.f('uq_invoice_lines_invoice_id_position'))
    )
    op.create_table('invoice_payments',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('invoice_id', sa.String(length=40), nullable=False),
    sa.Column('amount_minor', sa.BigInteger(), nullable=False),
    sa.Column('currency', sa.String(length=3), nullable=False),
    sa.Column('paid_on', sa.Date(), nullable=False),
    sa.Column('method', sa.String(length=20), nullable=False),
    sa.Column('reference', sa.String(length=200), nullable=False),
    sa.Column('trust_entry_id', sa.String(length=40), nullable=True),
    sa.Column('recorded_by', sa.String(length=40), nullable=True),
    sa.Column('recorded_at', casefile.db.UTCDateTime(), nullable=False),
    sa.ForeignKeyConstraint(['invoice_id'], ['invoices.id'], name=op.f('fk_invoice_payments_invoice_id_invoices'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_invoice_payments'))
    )
    op.create_index(op.f('ix_invoice_payments_invoice_id'), 'invoice_payments', ['invoice_id'], unique=False)


def downgrade() -> None:
    for table in (
        "invoice_payments",
        "invoice_lines",
        "expenses",
        "trust_entries",
        "trust_balances",
        "timers",
        "time_entries",
        "invoices",
        "billing_rates",
        "invoice_counters",
    ):
        op.drop_table(table)
