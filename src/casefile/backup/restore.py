"""`casefile restore`: verify the whole archive into a staging dir, then replace database, keys and
content, then migrate. A damaged archive, or a target that should not be replaced, changes nothing."""

from __future__ import annotations

import asyncio
import hashlib
import os
import sqlite3
import tarfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import asyncpg

from casefile import __version__
from casefile.backup.archive import (
    CHUNK,
    KEY_FILES,
    BackupError,
    Report,
    Throttled,
    fsync_dir,
    mb,
    member_path,
    read_manifest,
    staging_dir,
)
from casefile.backup.snapshot import libpq_connection, pg_tool, run_pg_tool, sqlite_path
from casefile.settings import Settings

if TYPE_CHECKING:
    from casefile.storage.s3 import S3ContentStore


@dataclass
class RestoreResult:
    manifest: dict[str, Any]
    warnings: list[str] = field(default_factory=list)


def _unpack(
    tar: tarfile.TarFile,
    members: Iterator[tarfile.TarInfo],
    manifest: dict[str, Any],
    staging: Path,
    report: Report,
) -> None:
    """Unpack every member into `staging`, checking each against the manifest's size and sha256."""
    expected: dict[str, dict[str, Any]] = manifest["members"]
    total_bytes = sum(int(m["size"]) for m in expected.values())
    done_bytes = 0
    seen: set[str] = set()
    progress = Throttled(report)
    for member in members:
        if member.name in seen or member.name not in expected or not member.isreg():
            raise BackupError(f"the archive holds an unexpected member {member.name!r}")
        want = expected[member.name]
        if member.size != want["size"]:
            raise BackupError(f"the archive is damaged: {member.name} has the wrong size")
        target = member_path(member.name, manifest, staging)
        target.parent.mkdir(parents=True, exist_ok=True)
        source = tar.extractfile(member)
        assert source is not None
        digest = hashlib.sha256()
        with open(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as out:
            while chunk := source.read(CHUNK):
                digest.update(chunk)
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != want["sha256"]:
            raise BackupError(f"the archive is damaged: {member.name} does not match its sha256")
        seen.add(member.name)
        done_bytes += member.size
        progress(f"verifying: {len(seen)}/{len(expected)} members, {mb(done_bytes)}/{mb(total_bytes)}")
    if missing := set(expected) - seen:
        raise BackupError(f"the archive is incomplete: {len(missing)} member(s) missing, e.g. {min(missing)}")
    report(f"verifying: all {len(seen)} members match the manifest ({mb(done_bytes)})")


def _check_revision(settings: Settings, revision: str) -> None:
    from alembic.script import ScriptDirectory
    from alembic.util import CommandError

    from casefile.migrate import alembic_config

    try:
        known = ScriptDirectory.from_config(alembic_config(settings)).get_revision(revision)
    except CommandError:
        known = None
    if known is None:
        raise BackupError(
            f"the backup's schema revision {revision!r} is unknown to this casefile {__version__}: "
            "restore it with the casefile version that wrote it (or a newer one)"
        )


def _sqlite_has_data(path: Path) -> tuple[bool, bool]:
    """(has any tables, has users or cases)."""
    if not path.exists():
        return False, False
    connection = sqlite3.connect(path, timeout=30)
    try:
        tables = {r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        rows = any(
            connection.execute(f"SELECT EXISTS (SELECT 1 FROM {t})").fetchone()[0]  # noqa: S608 (fixed names)
            for t in ("users", "cases")
            if t in tables
        )
    finally:
        connection.close()
    return bool(tables), rows


async def _postgres_has_data(settings: Settings) -> tuple[bool, bool]:
    url, env = libpq_connection(settings)
    try:
        connection = await asyncpg.connect(url, password=env.get("PGPASSWORD"))
    except (OSError, asyncpg.PostgresError) as exc:
        raise BackupError(f"cannot connect to the target database: {exc}") from exc
    try:
        tables = {
            r[0]
            for r in await connection.fetch(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
            )
        }
        rows = False
        for table in ("users", "cases"):
            if table in tables:
                rows = rows or bool(await connection.fetchval(f"SELECT EXISTS (SELECT 1 FROM {table})"))  # noqa: S608 (fixed names)
    finally:
        await connection.close()
    return bool(tables), rows


def _target_state(settings: Settings) -> tuple[bool, bool]:
    """(the target database has tables, it has data: users, cases, or stored content)."""
    if settings.is_sqlite:
        tables, rows = _sqlite_has_data(sqlite_path(settings))
    else:
        tables, rows = asyncio.run(_postgres_has_data(settings))
    bucket = _bucket(settings)
    if bucket is not None:
        content = next(bucket.keys(), None) is not None
    else:
        content = settings.content_dir.is_dir() and any(p.is_file() for p in settings.content_dir.rglob("*"))
    return tables, rows or content


def _bucket(settings: Settings) -> S3ContentStore | None:
    s3 = settings.s3_storage
    if s3 is None:
        return None
    from casefile.storage.s3 import S3ContentStore

    return S3ContentStore(s3, settings.upload_temp_dir)


def _check_target(settings: Settings, manifest: dict[str, Any], *, force: bool) -> bool:
    """Refuse what cannot or should not be restored; return whether the target has tables."""
    dialect = "sqlite" if settings.is_sqlite else "postgresql"
    if manifest["dialect"] != dialect:
        raise BackupError(
            f"this is a backup of a {manifest['dialect']} database and the configured database is "
            f"{dialect}: restore it into a {manifest['dialect']} database (moving between databases "
            "is not supported)"
        )
    _check_revision(settings, manifest["alembic_revision"])
    tables, data = _target_state(settings)
    if data and not force:
        where = sqlite_path(settings) if settings.is_sqlite else libpq_connection(settings)[0]
        raise BackupError(
            f"the target already holds data ({where}, {settings.storage_url or settings.content_dir}): "
            "restoring would replace "
            "it. Use --force to replace it, or restore into a fresh data dir and database"
        )
    return tables


def _place_sqlite(settings: Settings, staged: Path) -> None:
    target = sqlite_path(settings)
    target.parent.mkdir(parents=True, exist_ok=True)
    # A WAL or journal left by the database being replaced would be applied to the restored file.
    for suffix in ("-wal", "-shm", "-journal"):
        target.with_name(target.name + suffix).unlink(missing_ok=True)
    os.replace(staged, target)
    fsync_dir(target.parent)


async def _restore_postgres(settings: Settings, staged: Path, *, clean: bool, report: Report) -> None:
    argv = pg_tool(settings.pg_restore_command, "pg_restore")
    url, env = libpq_connection(settings)
    # One transaction: a failed restore leaves the target as it was. No owners or grants: the
    # roles of the source server need not exist here; the restoring user owns everything.
    options = ["--single-transaction", "--exit-on-error", "--no-owner", "--no-acl", "--no-password"]
    if clean:
        options += ["--clean", "--if-exists"]
    report("database: pg_restore running")
    await run_pg_tool([*argv, *options, f"--dbname={url}", str(staged)], env, None, report)


def _place_keys(settings: Settings, staging: Path, manifest: dict[str, Any], warnings: list[str]) -> None:
    configured = {
        "jwt-secret": settings.jwt_secret,
        "secret-key": settings.secret_key,
        "audit-signing-key": settings.audit_signing_key,
    }
    for name in manifest["keys"]:
        staged = staging / "keys" / name
        os.chmod(staged, 0o600)
        value = configured[name]
        if value is not None and value.get_secret_value() != staged.read_text().strip():
            warnings.append(
                f"{KEY_FILES[name]} is set in this environment and differs from the backup's {name}: "
                "the environment wins"
                + (", so restored webhooks cannot sign" if name == "secret-key" else "")
            )
        os.replace(staged, settings.data_dir / name)
    for variable in manifest["keys_from_environment"]:
        name = next(n for n, v in KEY_FILES.items() if v == variable)
        if configured[name] is None:
            warnings.append(
                f"the backed-up service took {variable} from its environment: set the same value "
                "here before starting casefile"
                + (" (webhook secrets cannot be decrypted without it)" if name == "secret-key" else "")
            )


def _place_content(settings: Settings, staging: Path, report: Report) -> None:
    staged = staging / "content"
    staged.mkdir(exist_ok=True)
    bucket = _bucket(settings)
    if bucket is not None:
        _upload_content(bucket, staged, report)
        return
    current = settings.content_dir
    if current.exists():
        os.replace(current, staging / "replaced-content")  # removed with the staging dir
    os.replace(staged, current)
    fsync_dir(current.parent)


def _upload_content(bucket: S3ContentStore, staged: Path, report: Report) -> None:
    """Put every content file of the archive in the bucket (those there already are kept), then
    remove the objects the archive does not have: the bucket then holds what the backup did."""
    restored = {path.name for path in staged.rglob("*") if path.is_file()}
    progress = Throttled(report)
    for number, sha256 in enumerate(sorted(restored), start=1):
        bucket.upload_file(sha256, staged / sha256[:2] / sha256[2:4] / sha256)
        progress(f"content: {number}/{len(restored)} objects", force=number == len(restored))
    for sha256 in list(bucket.keys()):
        if sha256 not in restored:
            bucket.remove(sha256)


def restore(settings: Settings, archive: Path, *, force: bool, report: Report) -> RestoreResult:
    """Verify the whole archive into a staging dir, then replace database, keys and content, then
    migrate. Refuses a target that has data unless `force`."""
    from casefile.migrate import upgrade

    if not archive.is_file():
        raise BackupError(f"{archive} is not a file")
    warnings: list[str] = []
    settings.ensure_data_dir()
    with staging_dir(settings.data_dir, ".restore-") as staging:
        try:
            with tarfile.open(archive, "r|*") as tar:
                members = iter(tar)
                manifest = read_manifest(tar, members)
                has_tables = _check_target(settings, manifest, force=force)
                _unpack(tar, members, manifest, staging, report)
        except (tarfile.TarError, zlib.error, EOFError, ValueError, KeyError) as exc:
            # ValueError: a manifest that is not JSON; KeyError: one without a field we need.
            raise BackupError(f"the archive is damaged or not a casefile backup: {exc}") from exc
        if settings.is_sqlite:
            _place_sqlite(settings, staging / "database")
        else:
            asyncio.run(_restore_postgres(settings, staging / "database", clean=has_tables, report=report))
        _place_keys(settings, staging, manifest, warnings)
        _place_content(settings, staging, report)
    report("database: migrating to the current schema")
    upgrade(settings)
    return RestoreResult(manifest, warnings)
