"""`casefile backup`: snapshot the database, then archive it with its keys and content, all under
the backup lock, and record `system.backup_completed`."""

from __future__ import annotations

import asyncio
import os
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from casefile.backup.archive import (
    KEY_FILES,
    BackupError,
    HashingWriter,
    Report,
    Throttled,
    add_file,
    add_manifest,
    add_stream,
    content_member,
    file_sha256,
    fsync_dir,
    manifest,
    mb,
    staging_dir,
)
from casefile.backup.snapshot import Snapshot, snapshot_postgres, snapshot_sqlite
from casefile.clock import format_timestamp, utcnow
from casefile.settings import Settings
from casefile.storage import backup_lock

if TYPE_CHECKING:
    from casefile.storage.s3 import S3ContentStore


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
    configured = {
        "CASEFILE_JWT_SECRET": settings.jwt_secret,
        "CASEFILE_SECRET_KEY": settings.secret_key,
        "CASEFILE_AUDIT_SIGNING_KEY": settings.audit_signing_key,
    }
    return [name for name, value in configured.items() if value is not None]


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
    members: dict[str, dict[str, Any]] = {}
    members[snapshot.member] = {"size": snapshot.dump.stat().st_size, "sha256": file_sha256(snapshot.dump)}
    keys = _key_files(settings)
    for name, path in keys.items():
        members[f"keys/{name}"] = {"size": path.stat().st_size, "sha256": file_sha256(path)}
    keys_from_environment = _keys_from_environment(settings)
    for variable in keys_from_environment:
        warnings.append(
            f"{variable} is set in the environment: the backup does not contain it; "
            "set the same value where you restore"
        )
    source = ContentSource(settings)
    missing: list[str] = []
    for sha256 in sorted(snapshot.content):
        size = source.size_of(sha256)
        if size is None:
            missing.append(sha256)
        else:
            members[content_member(sha256)] = {"size": size, "sha256": sha256}
    if missing:
        raise BackupError(
            f"{len(missing)} content file(s) that documents refer to are missing from {source.where} "
            f"(first: {missing[0]}): the content store is damaged"
        )
    created_at = format_timestamp(utcnow())
    described = manifest(created_at, snapshot.manifest_fields(), members, keys_from_environment)

    compressed = output.name.endswith((".gz", ".tgz"))
    partial, raw = _open_partial(output)
    try:
        writer = HashingWriter(raw)
        # Stream mode ("w|"): tarfile only ever calls write() on the hashing writer.
        with tarfile.open(
            fileobj=writer, mode="w|gz" if compressed else "w|", format=tarfile.PAX_FORMAT
        ) as tar:  # type: ignore[call-overload]
            add_manifest(tar, described)
            add_file(tar, snapshot.member, snapshot.dump, members[snapshot.member]["sha256"], lambda n: None)
            for name, path in keys.items():
                add_file(tar, f"keys/{name}", path, members[f"keys/{name}"]["sha256"], lambda n: None)
            _add_content(tar, source, snapshot.content, members, report)
        raw.flush()
        os.fsync(raw.fileno())
        raw.close()
        os.replace(partial, output)
        fsync_dir(output.parent)
    except BaseException:
        raw.close()
        partial.unlink(missing_ok=True)
        raise
    return writer.size, writer.digest.hexdigest(), warnings


class ContentSource:
    """Where the backup reads content: the data dir's files, or the object store's objects."""

    def __init__(self, settings: Settings) -> None:
        s3 = settings.s3_storage
        self.content_dir = settings.content_dir
        self.bucket: S3ContentStore | None = None
        self.where = str(self.content_dir)
        if s3 is not None:
            from casefile.storage.s3 import S3ContentStore

            self.bucket = S3ContentStore(s3, settings.upload_temp_dir)
            self.where = settings.storage_url or ""

    def _path(self, sha256: str) -> Path:
        return self.content_dir / content_member(sha256).removeprefix("content/")

    def size_of(self, sha256: str) -> int | None:
        if self.bucket is not None:
            return self.bucket.size_of(sha256)
        try:
            return self._path(sha256).stat().st_size
        except FileNotFoundError:
            return None

    def add(self, tar: tarfile.TarFile, sha256: str, size: int, on_read: Callable[[int], None]) -> None:
        name = content_member(sha256)
        if self.bucket is None:
            add_file(tar, name, self._path(sha256), sha256, on_read)
            return
        with self.bucket.open_stream(sha256) as stream:
            add_stream(
                tar, name, stream, size=size, sha256=sha256, on_read=on_read, where=f"{self.where} {name}"
            )


def _add_content(
    tar: tarfile.TarFile,
    source: ContentSource,
    content: dict[str, int],
    members: dict[str, dict[str, Any]],
    report: Report,
) -> None:
    total_files = len(content)
    total_bytes = sum(members[content_member(s)]["size"] for s in content)
    done_bytes = 0
    progress = Throttled(report)

    def count(n: int) -> None:
        nonlocal done_bytes
        done_bytes += n

    for number, sha256 in enumerate(sorted(content), start=1):
        source.add(tar, sha256, members[content_member(sha256)]["size"], count)
        progress(
            f"content: {number}/{total_files} files, {mb(done_bytes)}/{mb(total_bytes)}",
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
        staging_dir(output.parent, ".casefile-backup-") as staging,
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


async def record_backup(settings: Settings, result: BackupResult) -> None:
    """Emit `system.backup_completed` (webhooks subscribed to it get it from the delivery worker)."""
    from casefile.audit.service import trail_exists
    from casefile.db import Database
    from casefile.events import payloads
    from casefile.events.outbox import emit

    # Only the event's rows are written: the delivery worker of a running server finds them by
    # polling (no wake-up to send from this process).
    database = Database(settings)
    try:
        async with database.transaction(write=True) as session:
            data = payloads.system_backup_completed(
                file=str(result.path),
                size_bytes=result.size,
                sha256=result.sha256,
                database=result.snapshot.dialect,
                documents=result.snapshot.counts["documents"],
                started_at=result.started_at,
                duration_ms=result.duration_ms,
            )
            # `casefile backup` also serves a database an older casefile left (before migrating
            # it on restore): the event is recorded there too, its audit entry only where the
            # schema has the trail.
            await emit(session, "system.backup_completed", data, audited=await trail_exists(session))
    finally:
        await database.dispose()
