"""Alembic environment: runs on the service's own engine set-up, under a lock.

PostgreSQL: a transaction-scoped advisory lock, so that processes starting together migrate one
after the other. SQLite: the migration transaction is BEGIN IMMEDIATE (see casefile.db), which
does the same.
"""

import asyncio

from alembic import context
from sqlalchemy import text
from sqlalchemy.engine import Connection

from casefile.db import make_engine
from casefile.migrate import NEWER_SCHEMA, known_revisions
from casefile.models import Base
from casefile.settings import Settings

MIGRATION_LOCK_ID = 7_212_026

settings: Settings = context.config.attributes.get("settings") or Settings()


def include_object(obj: object, name: str | None, type_: str, reflected: bool, compare_to: object) -> bool:
    # The search tables (FTS5, PostgreSQL's lexicon of case words) are created by hand in
    # migrations; autogenerate must leave them be.
    return not (
        type_ == "table" and name is not None and name.startswith(("cases_fts", "passages_fts", "case_words"))
    )


def run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
        include_object=include_object,
        transactional_ddl=True,
    )
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            connection.execute(text(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK_ID})"))
        current = context.get_context().get_current_revision()
        if current is not None and current not in known_revisions():
            # A newer release migrated this database: its schema is a superset of ours
            # (expand-then-contract, docs/upgrading.md), so this release runs on it as it is.
            context.config.attributes[NEWER_SCHEMA] = current
            return
        context.run_migrations()


async def main() -> None:
    engine = make_engine(settings, pooled=False)
    async with engine.connect() as connection:
        await connection.run_sync(run)
    await engine.dispose()


asyncio.run(main())
