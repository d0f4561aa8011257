"""Sending stored content: a document's current version or another, with its ETag (the SHA-256),
`If-None-Match`, single `Range` requests and `HEAD`, recorded as a download of that version."""

from __future__ import annotations

from typing import Any, Protocol
from urllib.parse import quote

from fastapi import Request
from fastapi.responses import Response, StreamingResponse
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.documents import service
from casefile.errors import RangeNotSatisfiable
from casefile.models import Document
from casefile.runtime import Runtime
from casefile.storage.sniff import SUPPORTED_TYPES

# The bytes as stored, in the document's detected type (one of the supported upload types).
_BINARY = {"schema": {"type": "string", "format": "binary"}}
CONTENT_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "content": {
            media_type: _BINARY for media_type in ("application/octet-stream", *sorted(SUPPORTED_TYPES))
        },
        "description": "The document's (or version's) bytes, in its detected type (`Content-Type`)",
    },
    206: {
        "content": {
            media_type: _BINARY for media_type in ("application/octet-stream", *sorted(SUPPORTED_TYPES))
        },
        "description": "The requested byte range (`Content-Range`)",
    },
    304: {"description": "`If-None-Match` names the current ETag"},
    416: {"description": "The `Range` is outside the document"},
}


class StoredFile(Protocol):
    """A document or one of its versions: what its content is sent by."""

    file_name: str
    file_size: int
    file_type: str
    sha256: str
    version: int


async def send_content(
    request: Request, session: AsyncSession, runtime: Runtime, document: Document, stored: StoredFile
) -> Response:
    """The bytes of `stored` (the document's current version, or another), recorded as a download
    of that version unless it is a `HEAD` or a 304."""
    etag = f'"{stored.sha256}"'
    headers = {
        "ETag": etag,
        "Accept-Ranges": "bytes",
        "Content-Disposition": content_disposition(stored.file_name),
        "X-Content-Type-Options": "nosniff",
        "Cache-Control": "private, no-cache",
    }
    if etag in _etags(request.headers.get("if-none-match")):
        return Response(status_code=304, headers=headers)
    size = stored.file_size
    start, length, status = 0, size, 200
    byte_range = _single_range(request.headers.get("range"), size)
    if byte_range is not None:
        start, end = byte_range
        length, status = end - start + 1, 206
        headers["Content-Range"] = f"bytes {start}-{end}/{size}"
    headers["Content-Length"] = str(length)
    if request.method == "HEAD":  # the same status and headers, and no read of the content
        return Response(status_code=status, media_type=stored.file_type, headers=headers)
    await service.record_download(session, document, headers.get("Content-Range"), stored.version)
    return StreamingResponse(
        runtime.store.read(stored.sha256, start, length),
        status_code=status,
        media_type=stored.file_type,
        headers=headers,
    )


def content_disposition(name: str) -> str:
    """RFC 6266: an ASCII fallback plus the exact name as `filename*` (RFC 5987 encoding). The name
    was sanitized at upload (no path, no control characters, no quotes)."""
    fallback = name.encode("ascii", "replace").decode("ascii").replace("?", "_")
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"


def _etags(header: str | None) -> set[str]:
    if not header:
        return set()
    return {tag.strip().removeprefix("W/") for tag in header.split(",")}


def _single_range(header: str | None, size: int) -> tuple[int, int] | None:
    """(first, last) byte of a single `bytes=` range; None to send everything (no header, several
    ranges, or a form we do not serve)."""
    if not header or not header.startswith("bytes=") or "," in header:
        return None
    first, sep, last = header.removeprefix("bytes=").strip().partition("-")
    if not sep or not (first.isdigit() or last.isdigit()) or (first and not first.isdigit()):
        return None
    if last and not last.isdigit():
        return None
    if not first:  # the last N bytes
        length = int(last)
        if length == 0:
            raise RangeNotSatisfiable(headers={"Content-Range": f"bytes */{size}"})
        return max(0, size - length), size - 1
    start = int(first)
    end = min(int(last), size - 1) if last else size - 1
    if start >= size or end < start:
        raise RangeNotSatisfiable(headers={"Content-Range": f"bytes */{size}"})
    return start, end
