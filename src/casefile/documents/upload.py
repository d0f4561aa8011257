"""Receiving an upload without holding it in memory.

The multipart body is parsed as it arrives (python-multipart's streaming parser). The `file` part
goes straight into a temporary file in the data dir while its SHA-256 is computed, and the size
limit is enforced as the bytes come in. Whatever happens, the temporary file is gone when the
`receive_upload` block ends, unless the store took it.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from python_multipart.multipart import MultipartParser, parse_options_header

from casefile.errors import PayloadTooLarge, UnsupportedMediaType, ValidationFailed
from casefile.input_rules import nul_problems
from casefile.storage.sniff import HEAD_BYTES

FILE_FIELD = "file"
MAX_FIELD_BYTES = 64 * 1024  # each text field
MAX_FIELDS_BYTES = 256 * 1024  # all text fields together
MAX_PARTS = 200


@dataclass
class ReceivedUpload:
    fields: dict[str, list[str]] = field(default_factory=dict)
    path: Path | None = None
    file_name: str = ""
    size: int = 0
    sha256: str = ""
    head: bytes = b""

    @property
    def head_is_complete(self) -> bool:
        return self.size <= len(self.head)


class _Receiver:
    def __init__(self, temp_dir: Path, max_file_bytes: int) -> None:
        self.temp_dir = temp_dir
        self.max_file_bytes = max_file_bytes
        self.result = ReceivedUpload()
        self.parts = 0
        self.field_bytes = 0
        self._header_name = b""
        self._header_value = b""
        self._headers: dict[bytes, bytes] = {}
        self._name = ""
        self._buffer = bytearray()
        self._file: IO[bytes] | None = None
        self._hash = hashlib.sha256()
        self.error: Exception | None = None

    # python-multipart callbacks (synchronous; they only touch memory and the temp file)
    def on_part_begin(self) -> None:
        self.parts += 1
        if self.parts > MAX_PARTS:
            raise ValidationFailed.on("body", f"At most {MAX_PARTS} form fields")
        self._headers = {}
        self._buffer = bytearray()

    def on_header_field(self, data: bytes, start: int, end: int) -> None:
        self._header_name += data[start:end]

    def on_header_value(self, data: bytes, start: int, end: int) -> None:
        self._header_value += data[start:end]

    def on_header_end(self) -> None:
        self._headers[self._header_name.strip().lower()] = self._header_value.strip()
        self._header_name, self._header_value = b"", b""

    def on_headers_finished(self) -> None:
        _, options = parse_options_header(self._headers.get(b"content-disposition", b""))
        self._name = options.get(b"name", b"").decode("utf-8", "replace")
        if self._name == FILE_FIELD:
            if self.result.path is not None:
                raise ValidationFailed.on(FILE_FIELD, "Send one file per upload")
            self.result.file_name = options.get(b"filename", b"").decode("utf-8", "replace")
            path = self.temp_dir / f"upload-{secrets.token_hex(12)}.part"
            self._file = open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb")  # noqa: SIM115
            self.result.path = path

    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        chunk = data[start:end]
        if self._name == FILE_FIELD and self._file is not None:
            self.result.size += len(chunk)
            if self.result.size > self.max_file_bytes:
                raise PayloadTooLarge(f"Documents are limited to {self.max_file_bytes} bytes")
            if len(self.result.head) < HEAD_BYTES:
                self.result.head += chunk[: HEAD_BYTES - len(self.result.head)]
            self._hash.update(chunk)
            self._file.write(chunk)
            return
        self.field_bytes += len(chunk)
        if len(self._buffer) + len(chunk) > MAX_FIELD_BYTES or self.field_bytes > MAX_FIELDS_BYTES:
            raise ValidationFailed.on(self._name or "body", "This form field is too long")
        self._buffer += chunk

    def on_part_end(self) -> None:
        if self._name == FILE_FIELD and self._file is not None:
            self._file.flush()
            self._file.close()
            self._file = None
            self.result.sha256 = self._hash.hexdigest()
        elif self._name:
            try:
                value = self._buffer.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ValidationFailed.on(self._name, "Form fields must be UTF-8 text") from exc
            if problems := nul_problems([(self._name, value)]):
                raise ValidationFailed(details=problems)
            self.result.fields.setdefault(self._name, []).append(value)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


@asynccontextmanager
async def receive_upload(
    chunks: AsyncIterator[bytes], content_type: str, *, temp_dir: Path, max_file_bytes: int
) -> AsyncIterator[ReceivedUpload]:
    kind, options = parse_options_header(content_type)
    if kind == b"application/x-www-form-urlencoded":
        raise ValidationFailed.on(FILE_FIELD, "File is required (send multipart/form-data)")
    if kind != b"multipart/form-data":
        raise UnsupportedMediaType("Upload documents as multipart/form-data")
    boundary = options.get(b"boundary")
    if not boundary:
        raise ValidationFailed.on("body", "The multipart body has no boundary")
    receiver = _Receiver(temp_dir, max_file_bytes)
    callbacks: Any = {
        name: getattr(receiver, name)
        for name in (
            "on_part_begin",
            "on_header_field",
            "on_header_value",
            "on_header_end",
            "on_headers_finished",
            "on_part_data",
            "on_part_end",
        )
    }
    parser = MultipartParser(boundary, callbacks)
    try:
        try:
            async for chunk in chunks:
                parser.write(chunk)
            parser.finalize()
        except (ValidationFailed, PayloadTooLarge):
            raise
        except Exception as exc:  # the parser's own errors: a malformed body
            raise ValidationFailed.on("body", "The multipart body is malformed") from exc
        finally:
            receiver.close()
        if receiver.result.path is not None and not receiver.result.sha256:
            raise ValidationFailed.on("body", "The multipart body ended inside the file")
        yield receiver.result
    finally:
        if receiver.result.path is not None:
            receiver.result.path.unlink(missing_ok=True)
