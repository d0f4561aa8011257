"""The database: engines (SQLite and PostgreSQL), the declarative `Base`, one transaction per
request or job with what runs at its end, and `get_or_404`. Import from here
(`from casefile.db import Database`); the modules are the seams:

- `base`: `Base`, `UTCDateTime`;
- `sqlite`: statements on the event loop, and the write gate (docs/decisions/0017-sqlite-inline.md);
- `engines`: the pools, the retrying session, `Database`;
- `transactions`: before- and after-commit actions, rows written at the end, `finish`;
- `rows`: `get_or_404` and the statements that differ between the databases.
"""

from casefile.db.base import NAMING_CONVENTION, Base, UTCDateTime
from casefile.db.engines import POOL_RECYCLE_SECONDS, Database, RetryingSession, database_of, make_engine
from casefile.db.rows import (
    dialect_insert,
    dialect_name,
    get_or_404,
    is_write_session,
    lock_for_transaction,
    referenced,
)
from casefile.db.sqlite import SQLITE_LOCK_TIMEOUT_SECONDS, InlineSQLiteConnection, SQLiteWriteGate
from casefile.db.transactions import (
    AfterCommit,
    BeforeCommit,
    after_commit,
    before_commit,
    commit_early,
    finish,
    pending_rows,
    take_pending_rows,
    transaction_state,
)

__all__ = [
    "NAMING_CONVENTION",
    "POOL_RECYCLE_SECONDS",
    "SQLITE_LOCK_TIMEOUT_SECONDS",
    "AfterCommit",
    "Base",
    "BeforeCommit",
    "Database",
    "InlineSQLiteConnection",
    "RetryingSession",
    "SQLiteWriteGate",
    "UTCDateTime",
    "after_commit",
    "before_commit",
    "commit_early",
    "database_of",
    "dialect_insert",
    "dialect_name",
    "finish",
    "get_or_404",
    "is_write_session",
    "lock_for_transaction",
    "make_engine",
    "pending_rows",
    "referenced",
    "take_pending_rows",
    "transaction_state",
]
