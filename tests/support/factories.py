"""Data a test sends: unique names, a new case, an upload, and real files for the AI tests built
here: a multi-page text PDF (standard library only) and a DOCX (python-docx)."""

from __future__ import annotations

import io
import secrets
import zipfile
from typing import Any

import docx
import httpx

from tests.support.assertions import ok

# The content of an upload that gives none: a short memo.
TEXT = b"MEMORANDUM\n\nThe parties agree that delivery was due on 1 March 2025.\n"


def unique(prefix: str = "x") -> str:
    return f"{prefix}{secrets.token_hex(5)}"


def new_case(client: httpx.Client, **fields: Any) -> dict[str, Any]:
    body = {
        "title": fields.pop("title", unique("Case ")),
        "case_number": fields.pop("case_number", unique("CN-")),
        "case_type": "civil",
        "jurisdiction": "California",
        "client_name": "Acme Corp",
        "description": "Contract dispute over delivery terms",
        "status": "active",
        "priority": "high",
        **fields,
    }
    return dict(ok(client.post("/cases", json=body), 201))


def upload(client: httpx.Client, case_id: str, content: bytes = TEXT, name: str = "memo.txt", **form: Any):
    return client.post(
        f"/cases/{case_id}/documents", data=form, files={"file": (name, content, "text/plain")}
    )


def _pdf_string(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(pages: list[list[str]]) -> bytes:
    """A valid PDF with one text page per item (lines of Helvetica, uncompressed streams)."""
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        (
            "<< /Type /Pages /Kids ["
            + " ".join(f"{4 + 2 * i} 0 R" for i in range(len(pages)))
            + f"] /Count {len(pages)} >>"
        ).encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ]
    for i, lines in enumerate(pages):
        body = [
            "BT",
            "/F1 11 Tf",
            "14 TL",
            "72 760 Td",
            *(f"({_pdf_string(line)}) Tj T*" for line in lines),
            "ET",
        ]
        stream = "\n".join(body).encode("cp1252", "replace")
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {5 + 2 * i} 0 R >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body_bytes in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body_bytes + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def make_docx(paragraphs: list[str]) -> bytes:
    document = docx.Document()
    for paragraph in paragraphs:
        document.add_paragraph(paragraph)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def text_pdf(pages: list[str], width: int = 90) -> bytes:
    """One PDF page per string, cut into lines of `width` characters."""
    return make_pdf([[page[i : i + width] for i in range(0, len(page), width)] for page in pages])


def inflated(archive: bytes, member: str, size: int, *, filler: int = 0) -> bytes:
    """`archive` (a zip: DOCX, ODT, XLSX) with `member` padded by whitespace before its last tag to
    `size` bytes unpacked: still valid XML, and a zip bomb (whitespace packs ~1000:1); and with
    `filler` bytes unpacked in one more member."""
    source = zipfile.ZipFile(io.BytesIO(archive))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as bomb:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == member:
                head, _, tail = data.rpartition(b"</")
                data = head + b" " * max(0, size - len(data)) + b"</" + tail
            bomb.writestr(info.filename, data)
        if filler:
            bomb.writestr("filler.xml", b" " * filler)
    return out.getvalue()


def office_archive(members: dict[str, str]) -> bytes:
    """A minimal zip of XML members (enough for the ODT and XLSX extractors)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, xml in members.items():
            archive.writestr(name, xml)
    return out.getvalue()
