from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Protocol

_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def is_sha256(value: str) -> bool:
    return bool(_SHA256.match(value))


class ContentStore(Protocol):
    """Content-addressed bytes. Keys are SHA-256 hex digests, never client input, so no path or
    object name is ever built from what a client sent. An object-store implementation needs only
    these methods; routers and services see nothing else."""

    async def put(self, sha256: str, source: Path) -> None:
        """Take ownership of the finished file `source` (same-filesystem temp file). If the content
        is already stored, `source` is discarded."""
        ...

    async def delete(self, sha256: str) -> None: ...

    async def exists(self, sha256: str) -> bool: ...

    def read(self, sha256: str, start: int = 0, length: int | None = None) -> AsyncIterator[bytes]:
        """Stream `length` bytes (all, if None) from `start`."""
        ...

    def local_file(self, sha256: str) -> AbstractAsyncContextManager[Path]:
        """A file on this machine holding the content, for as long as the context lasts (for
        programs that need a path, such as text extraction in another process)."""
        ...
