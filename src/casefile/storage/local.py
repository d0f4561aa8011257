from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio

from casefile.storage.base import is_sha256

CHUNK = 256 * 1024


class LocalContentStore:
    """Files under `<root>/<aa>/<bb>/<sha256>`, written atomically (rename of a finished file)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, sha256: str) -> Path:
        if not is_sha256(sha256):
            raise ValueError("content key must be a SHA-256 hex digest")
        return self.root / sha256[:2] / sha256[2:4] / sha256

    async def put(self, sha256: str, source: Path) -> None:
        target = self._path(sha256)

        def place() -> None:
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.exists():
                source.unlink(missing_ok=True)
                return
            # fsync before the rename: after a crash the name never points at a partial file.
            fd = os.open(source, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(source, target)

        await anyio.to_thread.run_sync(place)

    @asynccontextmanager
    async def local_file(self, sha256: str) -> AsyncIterator[Path]:
        path = self._path(sha256)
        if not path.exists():
            raise FileNotFoundError(f"no stored content {sha256}")
        yield path

    async def delete(self, sha256: str) -> None:
        await anyio.to_thread.run_sync(lambda: self._path(sha256).unlink(missing_ok=True))

    async def exists(self, sha256: str) -> bool:
        return await anyio.to_thread.run_sync(self._path(sha256).exists)

    async def read(self, sha256: str, start: int = 0, length: int | None = None) -> AsyncIterator[bytes]:
        remaining = length
        async with await anyio.open_file(self._path(sha256), "rb") as handle:
            await handle.seek(start)
            while remaining is None or remaining > 0:
                chunk = await handle.read(CHUNK if remaining is None else min(CHUNK, remaining))
                if not chunk:
                    return
                if remaining is not None:
                    remaining -= len(chunk)
                yield chunk
