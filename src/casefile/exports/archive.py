"""Writing a zip with flat memory: each member is streamed in chunks into a temporary file (the
standard library's `zipfile`, in a worker thread so the event loop stays free), and its SHA-256 and
size are counted on the way for the manifest. Documents are stored as they are (already compressed
formats, mostly, and a 1 GiB matter would spend minutes deflating them); the JSON, JSON Lines and
HTML files are deflated."""

from __future__ import annotations

import hashlib
import json
import zipfile
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import IO, Any, TypedDict

import anyio

# What a JSON file's writer gathers before it hands the bytes to the zip.
JSON_CHUNK = 256 * 1024


class ManifestFile(TypedDict):
    path: str
    sha256: str
    size: int


class ZipWriter:
    """Members added one at a time, each streamed; `files` lists them for the manifest."""

    def __init__(
        self, path: Path, when: datetime, on_file: Callable[[ManifestFile], Awaitable[None]]
    ) -> None:
        self.zip = zipfile.ZipFile(path, "w", allowZip64=True)
        self.date_time = (when.year, when.month, when.day, when.hour, when.minute, when.second)
        self.files: list[ManifestFile] = []
        self.on_file = on_file

    async def add(self, name: str, chunks: AsyncIterable[bytes], *, compress: bool) -> ManifestFile:
        info = zipfile.ZipInfo(name, self.date_time)
        info.compress_type = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
        info.external_attr = 0o644 << 16
        member: IO[bytes] = await anyio.to_thread.run_sync(lambda: self.zip.open(info, "w", force_zip64=True))
        digest, size = hashlib.sha256(), 0
        try:
            async for chunk in chunks:
                digest.update(chunk)
                size += len(chunk)
                await anyio.to_thread.run_sync(member.write, chunk)
        finally:
            await anyio.to_thread.run_sync(member.close)
        entry: ManifestFile = {"path": name, "sha256": digest.hexdigest(), "size": size}
        self.files.append(entry)
        await self.on_file(entry)
        return entry

    async def add_bytes(self, name: str, data: bytes) -> ManifestFile:
        return await self.add(name, _once(data), compress=True)

    async def add_json(self, name: str, value: Any) -> ManifestFile:
        return await self.add_bytes(name, dumps(value, indent=2))

    async def add_json_array(self, name: str, items: AsyncIterable[dict[str, Any]]) -> ManifestFile:
        """A JSON array written as its items come (any number of them in flat memory)."""
        return await self.add(name, _json_array(items), compress=True)

    async def add_json_lines(self, name: str, items: AsyncIterable[dict[str, Any]]) -> ManifestFile:
        return await self.add(name, _json_lines(items), compress=True)

    async def close(self, manifest: bytes) -> None:
        """Write `manifest.json` (not listed in itself) and the zip's central directory."""
        info = zipfile.ZipInfo("manifest.json", self.date_time)
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = 0o644 << 16

        def finish() -> None:
            self.zip.writestr(info, manifest)
            self.zip.close()

        await anyio.to_thread.run_sync(finish)

    def abort(self) -> None:
        self.zip.close()


def dumps(value: Any, *, indent: int | None = None) -> bytes:
    separators = None if indent else (",", ":")
    return json.dumps(value, ensure_ascii=False, indent=indent, separators=separators).encode("utf-8")


async def _once(data: bytes) -> AsyncIterator[bytes]:
    yield data


async def _json_array(items: AsyncIterable[dict[str, Any]]) -> AsyncIterator[bytes]:
    buffer, first = bytearray(b"["), True
    async for item in items:
        buffer += (b"\n  " if first else b",\n  ") + dumps(item)
        first = False
        if len(buffer) >= JSON_CHUNK:
            yield bytes(buffer)
            buffer.clear()
    buffer += b"]\n" if first else b"\n]\n"
    yield bytes(buffer)


async def _json_lines(items: AsyncIterable[dict[str, Any]]) -> AsyncIterator[bytes]:
    buffer = bytearray()
    async for item in items:
        buffer += dumps(item) + b"\n"
        if len(buffer) >= JSON_CHUNK:
            yield bytes(buffer)
            buffer.clear()
    yield bytes(buffer)


async def each(items: Iterable[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
    for item in items:
        yield item


def file_sha256(path: Path, chunk: int = 1024 * 1024) -> tuple[str, int]:
    """The file's SHA-256 and size."""
    digest, size = hashlib.sha256(), 0
    with path.open("rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
            size += len(block)
    return digest.hexdigest(), size
