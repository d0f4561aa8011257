"""Schema migrations with Alembic, run by `casefile serve`, `casefile worker` and `casefile migrate`.

Migrations follow expand-then-contract (docs/upgrading.md): a release only adds to the schema what
its previous release can ignore, and removes only what that release no longer used. So a database
migrated by a newer release is left as it is by an older one, which runs on it without migrating
(a rolling upgrade restarts old processes, or rolls one back, on the new schema).
"""

from __future__ import annotations

import logging
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


@cache
def known_revisions() -> frozenset[str]:
    script = ScriptDirectory(str(MIGRATIONS))
    return frozenset(revision.revision for revision in script.walk_revisions())


@cache
def head_revision() -> str:
    head = ScriptDirectory(str(MIGRATIONS)).get_current_head()
    assert head is not None
    return head


def upgrade(settings: Settings) -> str | None:
    """Bring the database to the newest schema this release knows. Safe to run from several
    processes at once. Returns the database's revision when it is newer than this release (a
    newer casefile migrated it): then nothing is changed."""
    settings.ensure_data_dir()
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
