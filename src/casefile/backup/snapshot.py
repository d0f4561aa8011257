"""A consistent copy of the database, per dialect, and the facts read from that same copy.

SQLite: the standard library's online backup API inside one read transaction. PostgreSQL:
`pg_dump --snapshot` of a REPEATABLE READ transaction that also reads the content list. Also the
PostgreSQL client tools' plumbing (connection URL, running pg_dump/pg_restore), which restore uses.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
from sqlalchemy.engine import make_url

from casefile.backup.archive import PGDUMP_MEMBER, SQLITE_MEMBER, BackupError, Report, Throttled, mb
from casefile.settings import Settings

COUNTED_TABLES = ("users", "cases", "documents", "webhooks", "blobs")
SQLITE_PAGES_PER_STEP = 4096
# libpq connection parameters worth passing on from the SQLAlchemy URL; the rest are driver options.
_LIBPQ_PARAMETERS = frozenset(
    {"sslmode", "sslrootcert", "sslcert", "sslkey", "application_name", "connect_timeout", "options"}
)


@dataclass
class Snapshot:
    """What one database snapshot holds: the dump file, and facts read from the same snapshot."""

    dialect: str
    dump: Path
    revision: str
    counts: dict[str, int]
    content: dict[str, int]  # sha256 -> size, of every file a document refers to
    server_version: str | None = None

    @property
    def member(self) -> str:
        """The archive member that holds the dump."""
        return SQLITE_MEMBER if self.dialect == "sqlite" else PGDUMP_MEMBER

    def manifest_fields(self) -> dict[str, Any]:
        """What the manifest says about the database, all of it read from this snapshot."""
        return {
            "dialect": self.dialect,
            "server_version": self.server_version,
            "alembic_revision": self.revision,
            "database": self.member,
            "counts": self.counts,
            "content_files": len(self.content),
        }


def sqlite_path(settings: Settings) -> Path:
    database = make_url(settings.resolved_database_url).database
    if not database or database == ":memory:":
        raise BackupError("the SQLite database is in memory: there is nothing to back up or restore")
    return Path(database)


def libpq_connection(settings: Settings) -> tuple[str, dict[str, str]]:
    """Our SQLAlchemy URL (`postgresql+asyncpg://…`) as a libpq URL for pg_dump/pg_restore/asyncpg,
    and the environment that carries the password (PGPASSWORD: never on a command line)."""
    url = make_url(settings.resolved_database_url)
    query: dict[str, str] = {}
    for name, value in url.query.items():
        single = value if isinstance(value, str) else value[-1]
        if name == "ssl":  # asyncpg's name for libpq's sslmode
            query["sslmode"] = "require" if single in ("true", "True") else single
        elif name in _LIBPQ_PARAMETERS:
            query[name] = single
    plain = url.set(drivername="postgresql", password=None, query=query)
    env = dict(os.environ)
    if url.password is not None:
        env["PGPASSWORD"] = str(url.password)
    return plain.render_as_string(hide_password=False), env


def _size(path: Path) -> int:
    """A local stat: cheap enough to call from the event loop for a progress line."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


_REVISION_SQL = "SELECT version_num FROM alembic_version"
_CONTENT_SQL = "SELECT sha256, max(file_size) FROM documents GROUP BY sha256"
# Every version's content too (migration 0023, decision 0028): earlier versions are content the
# archive must hold. A database before that migration has no versions table: only the above.
_ALL_CONTENT_SQL = (
    "SELECT sha256, max(file_size) FROM (SELECT sha256, file_size FROM documents UNION ALL"
    " SELECT sha256, file_size FROM document_versions) AS content GROUP BY sha256"
)


def _describe_sqlite(path: Path) -> tuple[str, dict[str, int], dict[str, int]]:
    connection = sqlite3.connect(path)
    try:
        if connection.execute("PRAGMA quick_check").fetchone() != ("ok",):
            raise BackupError("the database copy fails SQLite's integrity check")
        try:
            revision = connection.execute(_REVISION_SQL).fetchone()
        except sqlite3.OperationalError as exc:
            raise BackupError("the database has no schema yet (run `casefile migrate`)") from exc
        counts = {t: connection.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in COUNTED_TABLES}  # noqa: S608 (fixed names)
        has_versions = connection.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'document_versions'"
        ).fetchone()
        content_sql = _ALL_CONTENT_SQL if has_versions else _CONTENT_SQL
        content = {sha: int(size) for sha, size in connection.execute(content_sql)}
        # The copy keeps the source's WAL mode; a rollback journal makes the archived file
        # self-contained (the service switches back to WAL when it opens it).
        connection.execute("PRAGMA journal_mode=DELETE")
    finally:
        connection.close()
    return str(revision[0]) if revision else "", counts, content


def snapshot_sqlite(settings: Settings, target: Path, report: Report) -> Snapshot:
    """Copy the live database with SQLite's online backup API."""
    source_path = sqlite_path(settings)
    if not source_path.exists():
        raise BackupError(f"there is no database at {source_path}")
    progress = Throttled(report)
    source = sqlite3.connect(source_path, isolation_level=None, timeout=30)
    try:
        # One read transaction around the whole copy: in WAL mode it is a consistent snapshot
        # that writers do not wait for. Without it every write by the service restarts the
        # stepwise copy, which under steady writes never finishes (measured).
        source.execute("BEGIN")
        source.execute("SELECT count(*) FROM sqlite_master").fetchone()
        target_connection = sqlite3.connect(target)

        def step(_status: int, remaining: int, total: int) -> None:
            done = total - remaining
            progress(f"database: {done}/{total} pages ({done * 100 // max(total, 1)}%)", force=not remaining)

        try:
            source.backup(target_connection, pages=SQLITE_PAGES_PER_STEP, progress=step)
        finally:
            target_connection.close()
        source.execute("COMMIT")
    finally:
        source.close()
    revision, counts, content = _describe_sqlite(target)
    return Snapshot("sqlite", target, revision, counts, content)


async def _describe_postgres(connection: Any) -> tuple[str, dict[str, int], dict[str, int], str]:
    if await connection.fetchval("SELECT to_regclass('alembic_version')") is None:
        raise BackupError("the database has no schema yet (run `casefile migrate`)")
    revision = await connection.fetchval(_REVISION_SQL)
    counts = {t: int(await connection.fetchval(f"SELECT count(*) FROM {t}")) for t in COUNTED_TABLES}  # noqa: S608 (fixed names)
    has_versions = await connection.fetchval("SELECT to_regclass('document_versions')") is not None
    content_sql = _ALL_CONTENT_SQL if has_versions else _CONTENT_SQL
    content = {row[0]: int(row[1]) for row in await connection.fetch(content_sql)}
    version = str(await connection.fetchval("SHOW server_version"))
    return str(revision or ""), counts, content, version


def pg_tool(configured: str, name: str) -> list[str]:
    """The argv of a configured PostgreSQL client tool (pg_dump, pg_restore), if it is installed."""
    argv = shlex.split(configured)
    if not argv or shutil.which(argv[0]) is None:
        raise BackupError(
            f"{configured!r} was not found: install the PostgreSQL client tools of the server's major "
            f"version, or set CASEFILE_{name.upper()}_COMMAND"
        )
    return argv


async def run_pg_tool(argv: list[str], env: dict[str, str], watch: Path | None, report: Report) -> None:
    """Run pg_dump/pg_restore; while it runs, report how much it has written to `watch`."""
    devnull, pipe = asyncio.subprocess.DEVNULL, asyncio.subprocess.PIPE
    process = await asyncio.create_subprocess_exec(*argv, env=env, stdin=devnull, stdout=devnull, stderr=pipe)
    assert process.stderr is not None
    errors = asyncio.ensure_future(process.stderr.read())
    name = Path(argv[0]).name
    while True:
        try:
            await asyncio.wait_for(asyncio.shield(errors), timeout=1.0)
            break
        except TimeoutError:
            if watch is not None:
                report(f"database: {name} running, {mb(_size(watch))} written")
    code = await process.wait()
    if code != 0:
        message = errors.result().decode(errors="replace").strip()
        raise BackupError(f"{name} failed (exit status {code}):\n{message}")


async def snapshot_postgres(settings: Settings, target: Path, report: Report) -> Snapshot:
    """`pg_dump --snapshot` of a REPEATABLE READ transaction that also reads the content list, so
    dump and list describe the same moment."""
    argv = pg_tool(settings.pg_dump_command, "pg_dump")
    url, env = libpq_connection(settings)
    connection = await asyncpg.connect(url, password=env.get("PGPASSWORD"))
    try:
        async with connection.transaction(isolation="repeatable_read", readonly=True):
            snapshot_id = await connection.fetchval("SELECT pg_export_snapshot()")
            revision, counts, content, version = await _describe_postgres(connection)
            # The exported snapshot stays valid while this transaction is open, i.e. all of pg_dump's run.
            dump = [*argv, "--format=custom", f"--snapshot={snapshot_id}", "--no-password"]
            await run_pg_tool([*dump, f"--file={target}", f"--dbname={url}"], env, target, report)
    finally:
        await connection.close()
    report(f"database: pg_dump wrote {mb(_size(target))}")
    return Snapshot("postgresql", target, revision, counts, content, version)
