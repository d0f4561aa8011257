"""What a file is, decided from its bytes (docs/api-conventions.md#documents): never from the client's
Content-Type.

Binary formats are recognised by their signatures (the `filetype` library, which also tells the
zip-based DOCX, XLSX and ODT apart from a plain zip). Text is text when it decodes without control
characters as UTF-8 or, for files from older systems (Windows-1252, Latin-1), in the single-byte
charset `charset-normalizer` finds clean (the AI pipeline decodes it the same way:
`nlp.extract.pages.decode_text`). Its subtype comes from the bytes where they can tell (HTML,
e-mail), and from the file name only for formats that are plain text underneath (Markdown, CSV).
"""

from __future__ import annotations

import re

import charset_normalizer
import filetype

HEAD_BYTES = 64 * 1024

# The types detection can name; uploads accept the subset runtime configuration allows (all by default).
SUPPORTED_TYPES: frozenset[str] = frozenset(
    {
        "application/pdf",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "application/msword",
        "application/vnd.oasis.opendocument.text",
        "application/rtf",
        "text/plain",
        "text/markdown",
        "text/html",
        "text/csv",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "message/rfc822",
        "image/png",
        "image/jpeg",
        "image/tiff",
    }
)

_MAIL_HEADER = re.compile(
    rb"^(?:from|to|subject|date|received|message-id|mime-version|return-path|delivered-to):[ \t]",
    re.IGNORECASE | re.MULTILINE,
)
_HTML_START = re.compile(
    rb"^\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)[\s>]", re.IGNORECASE | re.DOTALL
)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")


def _is_text(head: bytes, complete: bool) -> bool:
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut by the end of the sample is not an error.
        if complete or exc.start < len(head) - 3:
            return _is_legacy_text(head)
        text = head[: exc.start].decode("utf-8")
    return not _CONTROL.search(text)


def _is_legacy_text(head: bytes) -> bool:
    """Text in a legacy single-byte charset: one that `charset-normalizer` finds readable (its
    "chaos" under its default threshold), with no control characters once decoded. Binary data
    fails one or the other: it is full of control bytes, and what is left is not language."""
    best = charset_normalizer.from_bytes(head).best()
    if best is None or best.encoding.startswith(("utf_16", "utf_32")):
        return False
    return not _CONTROL.search(str(best))


# Office documents `filetype` takes for a plain zip: it looks for "word/" or "xl/" only among the
# first entries, and writers such as python-docx put docProps/ parts first. A zip whose local file
# headers in the sample name the main part is that document.
_OFFICE_MAIN_PARTS = (
    (b"word/document.xml", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
    (b"xl/workbook.xml", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
)


def _office_in_zip(head: bytes) -> str | None:
    for part, mime in _OFFICE_MAIN_PARTS:
        if re.search(rb"PK\x03\x04.{26}" + re.escape(part), head, re.DOTALL):
            return mime
    return None


def detect(head: bytes, file_name: str, *, complete: bool) -> str | None:
    """The MIME type of content starting with `head` (`complete`: head is the whole file), or
    None when it is neither a known binary format nor text."""
    kind = filetype.guess(head)
    if kind is not None:
        if kind.mime == "application/zip":
            return _office_in_zip(head) or str(kind.mime)
        return str(kind.mime)
    if head.startswith(b"{\\rtf"):
        return "application/rtf"
    body = head.removeprefix(b"\xef\xbb\xbf")
    if not _is_text(body, complete):
        return None
    if _HTML_START.match(body):
        return "text/html"
    first_block = body.split(b"\r\n\r\n", 1)[0].split(b"\n\n", 1)[0]
    if len(_MAIL_HEADER.findall(first_block)) >= 2:
        return "message/rfc822"
    suffix = file_name.lower().rsplit(".", 1)[-1] if "." in file_name else ""
    if suffix in ("md", "markdown"):
        return "text/markdown"
    if suffix == "csv":
        return "text/csv"
    return "text/plain"
