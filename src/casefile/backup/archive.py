"""The backup archive's format, and the file primitives that writing and reading it share.

The archive is a tar file (gzip-compressed when its name ends in `.gz` or `.tgz`):

    manifest.json             format, versions, dialect, schema revision, counts, every member's sha256
    manifest.json.sha256      the manifest's own checksum (`sha256sum -c` reads it)
    database/casefile.sqlite3 (SQLite) or database/casefile.pgdump (PostgreSQL, `pg_dump --format=custom`)
    keys/jwt-secret, keys/secret-key,     the generated keys from the data dir, when present
    keys/audit-signing-key
    content/aa/bb/<sha256>    every content file a document in the database snapshot refers to
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import secrets
import shutil
import tarfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, Protocol

from casefile import __version__

FORMAT = "casefile-backup"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
MANIFEST_SUM = "manifest.json.sha256"
SQLITE_MEMBER = "database/casefile.sqlite3"
PGDUMP_MEMBER = "database/casefile.pgdump"
KEY_FILES = {
    "jwt-secret": "CASEFILE_JWT_SECRET",
    "secret-key": "CASEFILE_SECRET_KEY",
    "audit-signing-key": "CASEFILE_AUDIT_SIGNING_KEY",
}
CHUNK = 1024 * 1024
MAX_MANIFEST_BYTES = 512 * 1024 * 1024
_CONTENT_MEMBER = re.compile(r"^content/([0-9a-f]{2})/([0-9a-f]{2})/([0-9a-f]{64})$")

Report = Callable[[str], None]


class BackupError(Exception):
    """A refusal or failure, worded for the operator."""


# --- small helpers -------------------------------------------------------------------------------


class Throttled:
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


def mb(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def staging_dir(parent: Path, prefix: str) -> Iterator[Path]:
    """A private directory for intermediate files, removed afterwards whatever happens."""
    path = parent / f"{prefix}{secrets.token_hex(6)}"
    path.mkdir(mode=0o700, parents=True)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def content_member(sha256: str) -> str:
    return f"content/{sha256[:2]}/{sha256[2:4]}/{sha256}"


# --- writing -------------------------------------------------------------------------------------


class HashingWriter:
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


class Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


class _VerifyingReader:
    """A member's source, hashed as tarfile reads it."""

    def __init__(self, raw: Readable, on_read: Callable[[int], None] | None = None) -> None:
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


def add_file(
    tar: tarfile.TarFile, name: str, path: Path, sha256: str, on_read: Callable[[int], None]
) -> None:
    with path.open("rb") as handle:
        add_stream(
            tar,
            name,
            handle,
            size=os.fstat(handle.fileno()).st_size,
            sha256=sha256,
            on_read=on_read,
            where=str(path),
        )


def add_stream(
    tar: tarfile.TarFile,
    name: str,
    source: Readable,
    *,
    size: int,
    sha256: str,
    on_read: Callable[[int], None],
    where: str,
) -> None:
    """Add `size` bytes read from `source` (a file, or an object store's stream) as `name`,
    checking them against `sha256` as they go."""
    reader = _VerifyingReader(source, on_read)
    tar.addfile(_tar_info(name, size), reader)
    if reader.digest.hexdigest() != sha256:
        raise BackupError(f"{where} changed or is damaged: its sha256 is not {sha256}")


def add_manifest(tar: tarfile.TarFile, manifest: dict[str, Any]) -> None:
    """The manifest and its checksum, the archive's first two members."""
    data = json.dumps(manifest, indent=1).encode()
    checksum = f"{hashlib.sha256(data).hexdigest()}  {MANIFEST}\n".encode()
    for name, member in ((MANIFEST, data), (MANIFEST_SUM, checksum)):
        tar.addfile(_tar_info(name, len(member)), io.BytesIO(member))


def manifest(
    created_at: str,
    database: dict[str, Any],
    members: dict[str, dict[str, Any]],
    keys_from_environment: list[str],
) -> dict[str, Any]:
    """What `manifest.json` says: the format and who wrote it when, the database snapshot's facts
    (`Snapshot.manifest_fields`), and every member's size and sha256."""
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "casefile_version": __version__,
        "created_at": created_at,
        **database,
        "keys": sorted(n for n in KEY_FILES if f"keys/{n}" in members),
        "keys_from_environment": keys_from_environment,
        "members": members,
    }


# --- reading -------------------------------------------------------------------------------------


def _read_member(tar: tarfile.TarFile, member: tarfile.TarInfo, limit: int) -> bytes:
    if not member.isreg() or member.size > limit:
        raise BackupError(f"the archive's {member.name} is not what a casefile backup holds")
    handle = tar.extractfile(member)
    assert handle is not None  # a regular file
    return handle.read()


def read_manifest(tar: tarfile.TarFile, members: Iterator[tarfile.TarInfo]) -> dict[str, Any]:
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


def member_path(name: str, manifest: dict[str, Any], staging: Path) -> Path:
    """Where a member is unpacked. Paths are built from checked names only, never taken as given."""
    if name == manifest["database"] and name in (SQLITE_MEMBER, PGDUMP_MEMBER):
        return staging / "database"
    if name.startswith("keys/") and name.removeprefix("keys/") in KEY_FILES:
        return staging / name
    match = _CONTENT_MEMBER.match(name)
    if match and match[3].startswith(match[1] + match[2]):
        return staging / name
    raise BackupError(f"the archive holds an unexpected member {name!r}")
