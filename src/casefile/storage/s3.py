"""Content in an S3-compatible object store (AWS S3, MinIO, Ceph, Garage...), through `obstore`.

Objects are named like the local files, `<prefix>/<aa>/<bb>/<sha256>`, so a backup's `content/`
members and a bucket listing read alike. Several API machines sharing one bucket (and one
database) serve each other's content: nothing about content is kept on a machine.

- Writes: a file up to one part is sent in one PUT; a larger one as a multipart upload of
  `part_bytes` parts, at most `concurrency` in flight, so an upload of any size holds about
  `part_bytes * (concurrency + 1)` bytes in memory. The file is read and hashed as it is sent; if
  its SHA-256 is not its key, the upload is aborted (nothing is written). With
  `checksum_algorithm=sha256` the store also checks every request's body on arrival.
- Reads: a GET with a `Range` of just the bytes asked for, streamed.
- `local_file`: a download into the temp dir, removed when the context ends.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import anyio
import obstore
from obstore.store import S3Store

from casefile.storage.base import is_sha256

if TYPE_CHECKING:
    from obstore import GetOptions

CHUNK = 1024 * 1024
MIN_PART_BYTES = 5 * 1024 * 1024  # S3's smallest part (all but the last)
WRITE_CHECK = ".casefile-write-check"


class ContentMismatch(ValueError):
    """The bytes sent are not those the key names: the upload was aborted."""


@dataclass(frozen=True)
class S3Config:
    """Where and how content is stored (settings.py builds it from CASEFILE_STORAGE_*)."""

    bucket: str
    prefix: str = ""
    endpoint: str | None = None  # None: AWS; e.g. http://127.0.0.1:9000 for MinIO
    region: str | None = None
    access_key_id: str | None = None  # None: the AWS_* environment, a web identity, instance metadata
    secret_access_key: str | None = None
    session_token: str | None = None
    server_side_encryption: str | None = None  # "AES256", "aws:kms", "aws:kms:dsse"
    sse_kms_key_id: str | None = None
    part_bytes: int = 8 * 1024 * 1024
    concurrency: int = 4
    timeout_seconds: float = 300

    def options(self) -> dict[str, Any]:
        """obstore's S3 configuration (no secret is logged: obstore does not print its config)."""
        config: dict[str, Any] = {"checksum_algorithm": "sha256"}
        for key, value in (
            ("endpoint", self.endpoint),
            ("region", self.region),
            ("access_key_id", self.access_key_id),
            ("secret_access_key", self.secret_access_key),
            ("session_token", self.session_token),
            ("server_side_encryption", self.server_side_encryption),
            ("sse_kms_key_id", self.sse_kms_key_id),
        ):
            if value:
                config[key] = value
        if self.endpoint:
            # MinIO and most self-hosted stores take the bucket in the path, not the host name.
            config["virtual_hosted_style_request"] = False
        return config


def object_key(sha256: str) -> str:
    if not is_sha256(sha256):
        raise ValueError("content key must be a SHA-256 hex digest")
    return f"{sha256[:2]}/{sha256[2:4]}/{sha256}"


class S3ContentStore:
    """`ContentStore` on an S3 bucket (see the module's docstring)."""

    def __init__(self, config: S3Config, temp_dir: Path) -> None:
        self.config = config
        self.temp_dir = temp_dir
        self.part_bytes = max(config.part_bytes, MIN_PART_BYTES)
        self._store = S3Store(
            config.bucket,
            prefix=config.prefix or None,
            config=config.options(),  # type: ignore[arg-type]
            client_options={
                "allow_http": bool(config.endpoint and config.endpoint.startswith("http://")),
                # A download streams for as long as the client reads: this bounds each request.
                "timeout": f"{int(config.timeout_seconds)}s",
                "connect_timeout": "10s",
            },
            # A store that is down fails a request within about half a minute (obstore's default
            # retries for three), with backoff between the tries.
            retry_config={
                "max_retries": 4,
                "retry_timeout": timedelta(seconds=30),
                "backoff": {
                    "init_backoff": timedelta(milliseconds=100),
                    "max_backoff": timedelta(seconds=5),
                    "base": 2,
                },
            },
        )

    # --- the ContentStore protocol -------------------------------------------------------------

    async def put(self, sha256: str, source: Path) -> None:
        key = object_key(sha256)
        try:
            if await self.exists(sha256):
                return
            size = (await anyio.Path(source).stat()).st_size
            if size <= self.part_bytes:
                data = await anyio.to_thread.run_sync(source.read_bytes)
                if hashlib.sha256(data).hexdigest() != sha256:
                    raise ContentMismatch(f"{source} is not the content {sha256}")
                await obstore.put_async(self._store, key, data, use_multipart=False)
            else:
                await obstore.put_async(
                    self._store,
                    key,
                    _verified_chunks(source, sha256),
                    use_multipart=True,
                    chunk_size=self.part_bytes,
                    max_concurrency=self.config.concurrency,
                )
        finally:
            await anyio.Path(source).unlink(missing_ok=True)

    async def delete(self, sha256: str) -> None:
        await obstore.delete_async(self._store, object_key(sha256))

    async def exists(self, sha256: str) -> bool:
        try:
            await obstore.head_async(self._store, object_key(sha256))
        except FileNotFoundError:
            return False
        return True

    async def read(self, sha256: str, start: int = 0, length: int | None = None) -> AsyncIterator[bytes]:
        if length == 0:
            return
        options: GetOptions = {}
        if length is not None:
            options["range"] = (start, start + length)
        elif start:
            options["range"] = {"offset": start}
        result = await obstore.get_async(self._store, object_key(sha256), options=options)
        async for chunk in result.stream(min_chunk_size=CHUNK):
            yield chunk

    @asynccontextmanager
    async def local_file(self, sha256: str) -> AsyncIterator[Path]:
        self.temp_dir.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix="download-", suffix=".part", dir=self.temp_dir)
        os.close(fd)
        path = Path(name)
        try:
            async with await anyio.open_file(path, "wb") as handle:
                async for chunk in self.read(sha256):
                    await handle.write(chunk)
            yield path
        finally:
            await anyio.Path(path).unlink(missing_ok=True)

    # --- for `casefile backup` and `casefile restore` (synchronous, as tarfile is) --------------

    def size_of(self, sha256: str) -> int | None:
        try:
            return int(obstore.head(self._store, object_key(sha256))["size"])
        except FileNotFoundError:
            return None

    def open_stream(self, sha256: str) -> StreamReader:
        return StreamReader(obstore.get(self._store, object_key(sha256)).stream(min_chunk_size=CHUNK))

    def upload_file(self, sha256: str, source: Path) -> None:
        """Place `source` (kept) unless the object is there already; the hash is checked."""
        key = object_key(sha256)
        try:
            obstore.head(self._store, key)
            return
        except FileNotFoundError:
            pass
        obstore.put(
            self._store,
            key,
            _verified_chunks_sync(source, sha256),
            use_multipart=True,
            chunk_size=self.part_bytes,
            max_concurrency=self.config.concurrency,
        )

    def keys(self) -> Iterator[str]:
        """The SHA-256 of every content object under the prefix."""
        for batch in obstore.list(self._store, chunk_size=1000):
            for meta in batch:
                name = meta["path"].rsplit("/", 1)[-1]
                if is_sha256(name) and meta["path"] == object_key(name):
                    yield name

    def check_writable(self) -> None:
        """Write and remove a small object (`casefile doctor`); raises what the store answers."""
        obstore.put(self._store, WRITE_CHECK, b"casefile", use_multipart=False)
        obstore.delete(self._store, WRITE_CHECK)

    def remove(self, sha256: str) -> None:
        obstore.delete(self._store, object_key(sha256))


async def _verified_chunks(source: Path, sha256: str) -> AsyncIterator[bytes]:
    """`source` in chunks, read and hashed in a worker thread; raises at the end (so that the
    multipart upload is aborted, not completed) when its SHA-256 is not `sha256`."""
    digest = hashlib.sha256()

    def read(handle: IO[bytes]) -> bytes:
        chunk = handle.read(CHUNK)
        digest.update(chunk)
        return chunk

    with source.open("rb") as handle:
        while chunk := await anyio.to_thread.run_sync(read, handle):
            yield chunk
    if digest.hexdigest() != sha256:
        raise ContentMismatch(f"{source} is not the content {sha256}")


def _verified_chunks_sync(source: Path, sha256: str) -> Iterator[bytes]:
    digest = hashlib.sha256()
    with source.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
            yield chunk
    if digest.hexdigest() != sha256:
        raise ContentMismatch(f"{source} is not the content {sha256}")


class StreamReader:
    """A file-like `read(n)` over a stream of chunks (tarfile wants exactly n bytes per read)."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks
        self._buffer = bytearray()
        self._done = False

    def read(self, size: int = -1) -> bytes:
        while not self._done and (size < 0 or len(self._buffer) < size):
            try:
                self._buffer += next(self._chunks)
            except StopIteration:
                self._done = True
        if size < 0:
            size = len(self._buffer)
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    def close(self) -> None:
        self._done = True
        self._buffer.clear()

    def __enter__(self) -> StreamReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
