"""Sample files for the documents tests, and the content store as a test sees it."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

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
    """What the server keeps on disk and in its tables, to check that refusals keep nothing."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self.content = api.settings.content_dir
        self.temp = api.settings.upload_temp_dir

    def files(self) -> set[Path]:
        return {p for p in self.content.rglob("*") if p.is_file()} if self.content.exists() else set()

    def temp_files(self) -> list[Path]:
        return list(self.temp.iterdir()) if self.temp.exists() else []

    def snapshot(self) -> tuple[int, int, set[Path]]:
        documents = self.api.sql("SELECT count(*) FROM documents")[0][0]
        blobs = self.api.sql("SELECT count(*) FROM blobs")[0][0]
        return documents, blobs, self.files()

    def path_of(self, sha256: str) -> Path:
        return self.content / sha256[:2] / sha256[2:4] / sha256
