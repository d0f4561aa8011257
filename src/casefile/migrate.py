"""Schema migrations with Alembic, run by `casefile serve`, `casefile worker` and `casefile migrate`.

Migrations follow expand-then-contract (docs/upgrading.md): a release only adds to the schema what
its previous release can ignore, and removes only what that release no longer used. So a database
migrated by a newer release is left as it is by an older one, which runs on it without migrating
(a rolling upgrade restarts old processes, or rolls one back, on the new schema).
"""

from __future__ import annotations

import ast
import asyncio
import logging
import re
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from casefile.settings import Settings

MIGRATIONS = Path(__file__).parent / "migrations"
NEWER_SCHEMA = "newer_schema"  # set by migrations/env.py: the database's revision, unknown here

log = logging.getLogger("casefile.migrate")


def alembic_config(settings: Settings) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("file_template", "%%(year)d_%%(month).2d_%%(day).2d_%%(rev)s_%%(slug)s")
    config.attributes["settings"] = settings
    return config


_REVISION_LINE = re.compile(r"^(revision|down_revision)\b[^=\n]*=\s*(.+)$", re.MULTILINE)


@cache
def _revision_graph() -> tuple[frozenset[str], str | None]:
    """Every revision, and the one head, read from the migration files' `revision` and
    `down_revision` lines (the head is None when they do not make exactly one, and Alembic decides)."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in (MIGRATIONS / "versions").glob("*.py"):
        values = {name: ast.literal_eval(value) for name, value in _REVISION_LINE.findall(path.read_text())}
        revisions.add(values["revision"])
        down = values.get("down_revision")
        parents.update((down,) if isinstance(down, str) else down or ())
    heads = revisions - parents
    return frozenset(revisions), next(iter(heads)) if len(heads) == 1 else None


def known_revisions() -> frozenset[str]:
    return _revision_graph()[0]


@cache
def head_revision() -> str:
    head = _revision_graph()[1] or ScriptDirectory(str(MIGRATIONS)).get_current_head()
    assert head is not None
    return head


def upgrade(settings: Settings) -> str | None:
    """Bring the database to the newest schema this release knows. Safe to run from several
    processes at once. Returns the database's revision when it is newer than this release (a
    newer casefile migrated it): then nothing is changed.

    A database already at this release's head (every start but the first after an upgrade) is
    seen so with one query, without loading Alembic and the migrations: a tenth of the start."""
    settings.ensure_data_dir()
    current = _current_revision(settings)
    if current is not None and current == _revision_graph()[1]:
        return None
    config = alembic_config(settings)
    command.upgrade(config, "head")
    newer: str | None = config.attributes.get(NEWER_SCHEMA)
    if newer is not None:
        log.warning(
            "the database schema (revision %s) is newer than this release of casefile knows (up to %s): "
            "a newer release migrated it; running on it without migrating (docs/upgrading.md)",
            newer,
            head_revision(),
        )
    return newer


def _current_revision(settings: Settings) -> str | None:
    """The database's revision, read directly (None: not migrated, or not readable this way)."""
    from sqlalchemy.engine import make_url

    url = make_url(settings.resolved_database_url)
    try:
        if url.get_backend_name() == "sqlite":
            if not url.database or url.database == ":memory:" or not Path(url.database).exists():
                return None
            with closing(sqlite3.connect(url.database)) as connection:
                row = connection.execute("SELECT version_num FROM alembic_version").fetchone()
            return str(row[0]) if row else None
        return asyncio.run(_postgresql_revision(url.set(drivername="postgresql").render_as_string(False)))
    except Exception:  # no table yet, or anything else: Alembic finds out and says
        return None


async def _postgresql_revision(dsn: str) -> str | None:
    import asyncpg

    connection = await asyncpg.connect(dsn, timeout=10)
    try:
        revision = await connection.fetchval("SELECT version_num FROM alembic_version")
    finally:
        await connection.close()
    return str(revision) if revision is not None else None


@dataclass(frozen=True)
class SchemaState:
    revision: str | None  # None: never migrated

    @property
    def current(self) -> bool:
        """At this release's head, or newer (migrated by a newer release: expand-then-contract)."""
        return self.revision == head_revision() or self.newer

    @property
    def newer(self) -> bool:
        return self.revision is not None and self.revision not in known_revisions()

    def describe(self) -> str:
        head = head_revision()
        if self.revision is None:
            return f"not migrated (this release's schema is revision {head}): run `casefile migrate`"
        if self.revision == head:
            return f"schema at revision {head}, this release's"
        if self.newer:
            return (
                f"schema at revision {self.revision}, newer than this release's {head}: upgrade casefile here"
            )
        return f"schema at revision {self.revision}, older than this release's {head}: run `casefile migrate`"


async def schema_state(connection: AsyncConnection | AsyncSession) -> SchemaState:
    """The database's schema revision (the last statement of its transaction when the database was
    never migrated: PostgreSQL then refuses further statements in it)."""
    try:
        revision = await connection.scalar(text("SELECT version_num FROM alembic_version"))
    except DBAPIError:  # no such table: never migrated
        return SchemaState(None)
    return SchemaState(revision)
