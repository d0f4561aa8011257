"""`casefile backup` and `casefile restore`: the whole service state in one archive.

The archive is a tar file (gzip-compressed when its name ends in `.gz` or `.tgz`):

    manifest.json             format, versions, dialect, schema revision, counts, every member's sha256
    manifest.json.sha256      the manifest's own checksum (`sha256sum -c` reads it)
    database/casefile.sqlite3 (SQLite) or database/casefile.pgdump (PostgreSQL, `pg_dump --format=custom`)
    keys/jwt-secret, keys/secret-key      the generated keys from the data dir, when present
    content/aa/bb/<sha256>    every content file a document in the database snapshot refers to

Consistency: the content list is read from the same snapshot as the database copy (SQLite: from the
copy itself; PostgreSQL: in the REPEATABLE READ transaction whose exported snapshot `pg_dump`
uses). A document deleted after the snapshot still needs its file in the backup, so the backup
holds an exclusive `flock` on `DATA_DIR/backup.lock` from before the snapshot until the last file
is copied, and content collection (documents.service.collect_content) removes nothing while it is
held (see `content_removal_allowed`).

Restore verifies every member against the manifest in a staging directory before it touches the
target, so a damaged archive changes nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import io
import json
import os
import re
import secrets
import shlex
import shutil
import sqlite3
import tarfile
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import asyncpg
from sqlalchemy.engine import make_url

from casefile import __version__
from casefile.clock import format_timestamp, utcnow
from casefile.settings import Settings

FORMAT = "casefile-backup"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
MANIFEST_SUM = "manifest.json.sha256"
SQLITE_MEMBER = "database/casefile.sqlite3"
PGDUMP_MEMBER = "database/casefile.pgdump"
KEY_FILES = {"jwt-secret": "CASEFILE_JWT_SECRET", "secret-key": "CASEFILE_SECRET_KEY"}
LOCK_FILE = "backup.lock"
COUNTED_TABLES = ("users", "cases", "documents", "webhooks", "blobs")
CHUNK = 1024 * 1024
SQLITE_PAGES_PER_STEP = 4096
LOCK_WAIT_SECONDS = 60.0
MAX_MANIFEST_BYTES = 512 * 1024 * 1024
_CONTENT_MEMBER = re.compile(r"^content/([0-9a-f]{2})/([0-9a-f]{2})/([0-9a-f]{64})$")
# libpq connection parameters worth passing on from the SQLAlchemy URL; the rest are driver options.
_LIBPQ_PARAMETERS = frozenset(
    {"sslmode", "sslrootcert", "sslcert", "sslkey", "application_name", "connect_timeout", "options"}
)

Report = Callable[[str], None]


class BackupError(Exception):
    """A refusal or failure, worded for the operator."""


# --- the backup lock -----------------------------------------------------------------------------


def _open_lock(data_dir: Path) -> int:
    data_dir.mkdir(parents=True, exist_ok=True)
    return os.open(data_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)


@contextlib.contextmanager
def backup_lock(data_dir: Path, *, wait_seconds: float = LOCK_WAIT_SECONDS) -> Iterator[None]:
    """Held by a backup from before its snapshot until its last content file is copied. Waits for
    content collections in progress (they hold the lock shared, for milliseconds)."""
    fd = _open_lock(data_dir)
    try:
        deadline = time.monotonic() + wait_seconds
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise BackupError(
                        f"{data_dir / LOCK_FILE} is locked: is another backup of this data dir running?"
                    ) from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


@contextlib.contextmanager
def content_removal_allowed(data_dir: Path) -> Iterator[bool]:
    """Whether stored content may be removed now: False while a backup holds the lock. Holds the
    lock shared while the caller removes, so a backup cannot take its snapshot in between."""
    fd = _open_lock(data_dir)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


# --- small helpers -------------------------------------------------------------------------------


class _Throttled:
    """Progress lines at most once a second (and whenever `force` is given)."""

    def __init__(self, report: Report, interval: float = 1.0) -> None:
        self.report = report
        self.interval = interval
        self.last = 0.0

    def __call__(self, line: str, *, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self.last >= self.interval:
            self.last = now
            self.report(line)


def _mb(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def content_member(sha256: str) -> str:
    return f"content/{sha256[:2]}/{sha256[2:4]}/{sha256}"


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


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# --- database snapshots --------------------------------------------------------------------------


@dataclass
class Snapshot:
    """What one database snapshot holds: the dump file, and facts read from the same snapshot."""

    dialect: str
    dump: Path
    revision: str
    counts: dict[str, int]
    content: dict[str, int]  # sha256 -> size, of every file a document refers to
    server_version: str | None = None


_REVISION_SQL = "SELECT version_num FROM alembic_version"
_CONTENT_SQL = "SELECT sha256, max(file_size) FROM documents GROUP BY sha256"


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
        content = {sha: int(size) for sha, size in connection.execute(_CONTENT_SQL)}
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
    progress = _Throttled(report)
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
    content = {row[0]: int(row[1]) for row in await connection.fetch(_CONTENT_SQL)}
    version = str(await connection.fetchval("SHOW server_version"))
    return str(revision or ""), counts, content, version


def _command(configured: str, name: str) -> list[str]:
    argv = shlex.split(configured)
    if not argv or shutil.which(argv[0]) is None:
        raise BackupError(
            f"{configured!r} was not found: install the PostgreSQL client tools of the server's major "
            f"version, or set CASEFILE_{name.upper()}_COMMAND"
        )
    return argv


async def _run_tool(argv: list[str], env: dict[str, str], watch: Path | None, report: Report) -> None:
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
                report(f"database: {name} running, {_mb(_size(watch))} written")
    code = await process.wait()
    if code != 0:
        message = errors.result().decode(errors="replace").strip()
        raise BackupError(f"{name} failed (exit status {code}):\n{message}")


async def snapshot_postgres(settings: Settings, target: Path, report: Report) -> Snapshot:
    """`pg_dump --snapshot` of a REPEATABLE READ transaction that also reads the content list, so
    dump and list describe the same moment."""
    argv = _command(settings.pg_dump_command, "pg_dump")
    url, env = libpq_connection(settings)
    connection = await asyncpg.connect(url, password=env.get("PGPASSWORD"))
    try:
        async with connection.transaction(isolation="repeatable_read", readonly=True):
            snapshot_id = await connection.fetchval("SELECT pg_export_snapshot()")
            revision, counts, content, version = await _describe_postgres(connection)
            # The exported snapshot stays valid while this transaction is open, i.e. all of pg_dump's run.
            dump = [*argv, "--format=custom", f"--snapshot={snapshot_id}", "--no-password"]
            await _run_tool([*dump, f"--file={target}", f"--dbname={url}"], env, target, report)
    finally:
        await connection.close()
    report(f"database: pg_dump wrote {_mb(_size(target))}")
    return Snapshot("postgresql", target, revision, counts, content, version)


# --- writing the archive -------------------------------------------------------------------------


class _HashingWriter:
    """The archive's file, hashed and counted as tarfile writes it."""

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw = raw
        self.digest = hashlib.sha256()
        self.size = 0

    def write(self, data: bytes) -> int:
        self.raw.write(data)
        self.digest.update(data)
        self.size += len(data)
        return len(data)

    def flush(self) -> None:
        self.raw.flush()

    def tell(self) -> int:
        return self.size


class _VerifyingReader:
    """A member's source, hashed as tarfile reads it."""

    def __init__(self, raw: IO[bytes], on_read: Callable[[int], None] | None = None) -> None:
        self.raw = raw
        self.digest = hashlib.sha256()
        self.on_read = on_read

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        self.digest.update(data)
        if self.on_read is not None:
            self.on_read(len(data))
        return data


def _tar_info(name: str, size: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size = size
    info.mode = 0o600
    info.mtime = int(time.time())
    return info


def _add_file(
    tar: tarfile.TarFile, name: str, path: Path, sha256: str, on_read: Callable[[int], None]
) -> None:
    with path.open("rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        reader = _VerifyingReader(handle, on_read)
        tar.addfile(_tar_info(name, size), reader)
    if reader.digest.hexdigest() != sha256:
        raise BackupError(f"{path} changed or is damaged: its sha256 is not {sha256}")


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    tar.addfile(_tar_info(name, len(data)), io.BytesIO(data))


@dataclass
class BackupResult:
    path: Path
    size: int
    sha256: str
    snapshot: Snapshot
    started_at: str
    duration_ms: int
    warnings: list[str] = field(default_factory=list)


def _key_files(settings: Settings) -> dict[str, Path]:
    return {name: settings.data_dir / name for name in KEY_FILES if (settings.data_dir / name).is_file()}


def _keys_from_environment(settings: Settings) -> list[str]:
    configured = {"CASEFILE_JWT_SECRET": settings.jwt_secret, "CASEFILE_SECRET_KEY": settings.secret_key}
    return [name for name, value in configured.items() if value is not None]


def _manifest(
    settings: Settings, snapshot: Snapshot, members: dict[str, dict[str, Any]], created_at: str
) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "casefile_version": __version__,
        "created_at": created_at,
        "dialect": snapshot.dialect,
        "server_version": snapshot.server_version,
        "alembic_revision": snapshot.revision,
        "database": SQLITE_MEMBER if snapshot.dialect == "sqlite" else PGDUMP_MEMBER,
        "counts": snapshot.counts,
        "content_files": len(snapshot.content),
        "keys": sorted(n for n in KEY_FILES if f"keys/{n}" in members),
        "keys_from_environment": _keys_from_environment(settings),
        "members": members,
    }


def _open_partial(output: Path) -> tuple[Path, IO[bytes]]:
    partial = output.with_name(output.name + ".partial")
    # 0600: the archive holds the keys that sign tokens and decrypt webhook secrets.
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # O_CREAT's mode does not apply to a file left by an earlier attempt
    return partial, os.fdopen(fd, "wb")


def write_archive(
    settings: Settings, output: Path, snapshot: Snapshot, report: Report
) -> tuple[int, str, list[str]]:
    """Write manifest, database, keys and content to `output` (atomically: `.partial`, fsync,
    rename). Returns size, sha256 and warnings."""
    warnings: list[str] = []
    content_dir = settings.content_dir
    members: dict[str, dict[str, Any]] = {}
    db_member = SQLITE_MEMBER if snapshot.dialect == "sqlite" else PGDUMP_MEMBER
    members[db_member] = {"size": snapshot.dump.stat().st_size, "sha256": file_sha256(snapshot.dump)}
    keys = _key_files(settings)
    for name, path in keys.items():
        members[f"keys/{name}"] = {"size": path.stat().st_size, "sha256": file_sha256(path)}
    for variable in _keys_from_environment(settings):
        warnings.append(
            f"{variable} is set in the environment: the backup does not contain it; "
            "set the same value where you restore"
        )
    missing: list[str] = []
    for sha256 in sorted(snapshot.content):
        path = content_dir / content_member(sha256).removeprefix("content/")
        try:
            members[content_member(sha256)] = {"size": path.stat().st_size, "sha256": sha256}
        except FileNotFoundError:
            missing.append(sha256)
    if missing:
        raise BackupError(
            f"{len(missing)} content file(s) that documents refer to are missing from {content_dir} "
            f"(first: {missing[0]}): the content store is damaged"
        )
    created_at = format_timestamp(utcnow())
    manifest = json.dumps(_manifest(settings, snapshot, members, created_at), indent=1).encode()
    manifest_sum = f"{hashlib.sha256(manifest).hexdigest()}  {MANIFEST}\n".encode()

    compressed = output.name.endswith((".gz", ".tgz"))
    partial, raw = _open_partial(output)
    try:
        writer = _HashingWriter(raw)
        # Stream mode ("w|"): tarfile only ever calls write() on the hashing writer.
        with tarfile.open(
            fileobj=writer, mode="w|gz" if compressed else "w|", format=tarfile.PAX_FORMAT
        ) as tar:  # type: ignore[call-overload]
            _add_bytes(tar, MANIFEST, manifest)
            _add_bytes(tar, MANIFEST_SUM, manifest_sum)
            _add_file(tar, db_member, snapshot.dump, members[db_member]["sha256"], lambda n: None)
            for name, path in keys.items():
                _add_file(tar, f"keys/{name}", path, members[f"keys/{name}"]["sha256"], lambda n: None)
            _add_content(tar, content_dir, snapshot.content, members, report)
        raw.flush()
        os.fsync(raw.fileno())
        raw.close()
        os.replace(partial, output)
        _fsync_dir(output.parent)
    except BaseException:
        raw.close()
        partial.unlink(missing_ok=True)
        raise
    return writer.size, writer.digest.hexdigest(), warnings


def _add_content(
    tar: tarfile.TarFile,
    content_dir: Path,
    content: dict[str, int],
    members: dict[str, dict[str, Any]],
    report: Report,
) -> None:
    total_files = len(content)
    total_bytes = sum(members[content_member(s)]["size"] for s in content)
    done_bytes = 0
    progress = _Throttled(report)

    def count(n: int) -> None:
        nonlocal done_bytes
        done_bytes += n

    for number, sha256 in enumerate(sorted(content), start=1):
        name = content_member(sha256)
        _add_file(tar, name, content_dir / name.removeprefix("content/"), sha256, count)
        progress(
            f"content: {number}/{total_files} files, {_mb(done_bytes)}/{_mb(total_bytes)}",
            force=number == total_files,
        )


def backup(settings: Settings, output: Path, report: Report) -> BackupResult:
    """Snapshot the database, then archive it with its content and keys, all under the backup lock."""
    output = output.resolve()
    if not output.parent.is_dir():
        raise BackupError(f"{output.parent} is not a directory")
    started = utcnow()
    clock = time.monotonic()
    with (
        backup_lock(settings.data_dir),
        _staging(output.parent, ".casefile-backup-") as staging,
    ):
        dump = staging / ("casefile.sqlite3" if settings.is_sqlite else "casefile.pgdump")
        if settings.is_sqlite:
            snapshot = snapshot_sqlite(settings, dump, report)
        else:
            snapshot = asyncio.run(snapshot_postgres(settings, dump, report))
        size, sha256, warnings = write_archive(settings, output, snapshot, report)
    return BackupResult(
        path=output,
        size=size,
        sha256=sha256,
        snapshot=snapshot,
        started_at=format_timestamp(started),
        duration_ms=int((time.monotonic() - clock) * 1000),
        warnings=warnings,
    )


@contextlib.contextmanager
def _staging(parent: Path, prefix: str) -> Iterator[Path]:
    """A private directory for intermediate files, removed afterwards whatever happens."""
    path = parent / f"{prefix}{secrets.token_hex(6)}"
    path.mkdir(mode=0o700, parents=True)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


async def record_backup(settings: Settings, result: BackupResult) -> None:
    """Emit `system.backup_completed` (webhooks subscribed to it get it from the delivery worker)."""
    from casefile.events import catalogue
    from casefile.events.outbox import emit
    from casefile.runtime import Runtime

    runtime = Runtime.start(settings)
    try:
        async with runtime.db.transaction(write=True) as session:
            data = catalogue.system_backup_completed(
                file=str(result.path),
                size_bytes=result.size,
                sha256=result.sha256,
                database=result.snapshot.dialect,
                documents=result.snapshot.counts["documents"],
                started_at=result.started_at,
                duration_ms=result.duration_ms,
            )
            await emit(session, "system.backup_completed", data)
    finally:
        await runtime.close()


# --- restore -------------------------------------------------------------------------------------


@dataclass
class RestoreResult:
    manifest: dict[str, Any]
    warnings: list[str] = field(default_factory=list)


def _read_member(tar: tarfile.TarFile, member: tarfile.TarInfo, limit: int) -> bytes:
    if not member.isreg() or member.size > limit:
        raise BackupError(f"the archive's {member.name} is not what a casefile backup holds")
    handle = tar.extractfile(member)
    assert handle is not None  # a regular file
    return handle.read()


def _read_manifest(tar: tarfile.TarFile, members: Iterator[tarfile.TarInfo]) -> dict[str, Any]:
    # A stream is read once, front to back: each member is read before the next header.
    first = next(members, None)
    if first is None or first.name != MANIFEST:
        raise BackupError("this is not a casefile backup (it does not start with manifest.json)")
    manifest_bytes = _read_member(tar, first, MAX_MANIFEST_BYTES)
    second = next(members, None)
    if second is None or second.name != MANIFEST_SUM:
        raise BackupError("this is not a casefile backup (manifest.json.sha256 is missing)")
    expected = _read_member(tar, second, 1024).decode(errors="replace").split(" ", 1)[0]
    if hashlib.sha256(manifest_bytes).hexdigest() != expected:
        raise BackupError("the archive is damaged: manifest.json does not match its checksum")
    manifest: dict[str, Any] = json.loads(manifest_bytes)
    if manifest.get("format") != FORMAT or manifest.get("format_version") != FORMAT_VERSION:
        raise BackupError(
            f"unsupported backup format {manifest.get('format')!r} version {manifest.get('format_version')!r}"
        )
    _check_key_lists(manifest)
    return manifest


def _check_key_lists(manifest: dict[str, Any]) -> None:
    """The checksum guards against damage, not against an edited manifest: a key list naming
    anything unknown, or a key without its member, is refused before anything is replaced."""
    keys, from_environment = manifest.get("keys"), manifest.get("keys_from_environment")
    members = manifest.get("members")
    if (
        not isinstance(keys, list)
        or not isinstance(from_environment, list)
        or not isinstance(members, dict)
        or any(name not in KEY_FILES or f"keys/{name}" not in members for name in keys)
        or any(variable not in KEY_FILES.values() for variable in from_environment)
    ):
        raise BackupError("the archive's manifest lists keys it cannot hold")


def _member_path(name: str, manifest: dict[str, Any], staging: Path) -> Path:
    """Where a member is unpacked. Paths are built from checked names only, never taken as given."""
    if name == manifest["database"] and name in (SQLITE_MEMBER, PGDUMP_MEMBER):
        return staging / "database"
    if name.startswith("keys/") and name.removeprefix("keys/") in KEY_FILES:
        return staging / name
    match = _CONTENT_MEMBER.match(name)
    if match and match[3].startswith(match[1] + match[2]):
        return staging / name
    raise BackupError(f"the archive holds an unexpected member {name!r}")


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
    progress = _Throttled(report)
    for member in members:
        if member.name in seen or member.name not in expected or not member.isreg():
            raise BackupError(f"the archive holds an unexpected member {member.name!r}")
        want = expected[member.name]
        if member.size != want["size"]:
            raise BackupError(f"the archive is damaged: {member.name} has the wrong size")
        target = _member_path(member.name, manifest, staging)
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
        progress(f"verifying: {len(seen)}/{len(expected)} members, {_mb(done_bytes)}/{_mb(total_bytes)}")
    if missing := set(expected) - seen:
        raise BackupError(f"the archive is incomplete: {len(missing)} member(s) missing, e.g. {min(missing)}")
    report(f"verifying: all {len(seen)} members match the manifest ({_mb(done_bytes)})")


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
    content = settings.content_dir.is_dir() and any(p.is_file() for p in settings.content_dir.rglob("*"))
    return tables, rows or content


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
            f"the target already holds data ({where}, {settings.content_dir}): restoring would replace "
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
    _fsync_dir(target.parent)


async def _restore_postgres(settings: Settings, staged: Path, *, clean: bool, report: Report) -> None:
    argv = _command(settings.pg_restore_command, "pg_restore")
    url, env = libpq_connection(settings)
    # One transaction: a failed restore leaves the target as it was. No owners or grants: the
    # roles of the source server need not exist here; the restoring user owns everything.
    options = ["--single-transaction", "--exit-on-error", "--no-owner", "--no-acl", "--no-password"]
    if clean:
        options += ["--clean", "--if-exists"]
    report("database: pg_restore running")
    await _run_tool([*argv, *options, f"--dbname={url}", str(staged)], env, None, report)


def _place_keys(settings: Settings, staging: Path, manifest: dict[str, Any], warnings: list[str]) -> None:
    configured = {"jwt-secret": settings.jwt_secret, "secret-key": settings.secret_key}
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


def _place_content(settings: Settings, staging: Path) -> None:
    staged = staging / "content"
    staged.mkdir(exist_ok=True)
    current = settings.content_dir
    if current.exists():
        os.replace(current, staging / "replaced-content")  # removed with the staging dir
    os.replace(staged, current)
    _fsync_dir(current.parent)


def restore(settings: Settings, archive: Path, *, force: bool, report: Report) -> RestoreResult:
    """Verify the whole archive into a staging dir, then replace database, keys and content, then
    migrate. Refuses a target that has data unless `force`."""
    from casefile.migrate import upgrade

    if not archive.is_file():
        raise BackupError(f"{archive} is not a file")
    warnings: list[str] = []
    settings.ensure_data_dir()
    with _staging(settings.data_dir, ".restore-") as staging:
        try:
            with tarfile.open(archive, "r|*") as tar:
                members = iter(tar)
                manifest = _read_manifest(tar, members)
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
        _place_content(settings, staging)
    report("database: migrating to the current schema")
    upgrade(settings)
    return RestoreResult(manifest, warnings)
