"""Sample files for the documents tests, and the content store as a test sees it."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from tests.support.s3 import S3Server
from tests.support.servers import Api

PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + b"\x00" * 64
REAL_DOCS = Path(__file__).parent.parent / "ai" / "real" / "docs"
EXE = b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00" + b"\x00" * 200


def docx() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("_rels/.rels", "<Relationships/>")
        z.writestr("word/document.xml", "<w:document/>")
    return buffer.getvalue()


def plain_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("notes.txt", "hello")
    return buffer.getvalue()


class Storage:
    """What the server keeps in its content store (the data dir's files, or the objects of its
    bucket as the S3 server holds them) and in its tables, to check that refusals keep nothing."""

    def __init__(self, api: Api, s3: S3Server | None = None) -> None:
        self.api = api
        endpoint = api.settings.storage_endpoint  # the test S3 server's
        if s3 is None and api.settings.storage_url and endpoint:
            s3 = S3Server(endpoint)
        self.s3 = s3
        self.content = api.settings.content_dir
        self.temp = api.settings.upload_temp_dir
        location = api.settings.s3_storage
        self.bucket = location.bucket if location else ""
        self.prefix = f"{location.prefix}/" if location and location.prefix else ""

    def files(self) -> set[str]:
        """Every stored content item, as `aa/bb/<sha256>`."""
        if self.s3 is not None:
            return {key.removeprefix(self.prefix) for key in self.s3.keys(self.bucket, self.prefix)}
        if not self.content.exists():
            return set()
        return {str(p.relative_to(self.content)) for p in self.content.rglob("*") if p.is_file()}

    def temp_files(self) -> list[Path]:
        return list(self.temp.iterdir()) if self.temp.exists() else []

    def snapshot(self) -> tuple[int, int, set[str]]:
        documents = self.api.sql("SELECT count(*) FROM documents")[0][0]
        blobs = self.api.sql("SELECT count(*) FROM blobs")[0][0]
        return documents, blobs, self.files()

    @staticmethod
    def name_of(sha256: str) -> str:
        return f"{sha256[:2]}/{sha256[2:4]}/{sha256}"

    def content_of(self, sha256: str) -> bytes | None:
        """The stored bytes of `sha256`, None when they are not stored."""
        if self.s3 is not None:
            return self.s3.get(self.bucket, self.prefix + self.name_of(sha256))
        path = self.content / self.name_of(sha256)
        return path.read_bytes() if path.exists() else None

    def has(self, sha256: str) -> bool:
        return self.content_of(sha256) is not None
