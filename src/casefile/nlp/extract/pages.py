"""Pages and the limits on them: a hostile file must not exhaust memory."""

from __future__ import annotations

import codecs
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import charset_normalizer

from ..types import Page

MAX_CHARS = 2_000_000
MAX_PAGES = 5_000


@dataclass(frozen=True)
class Extraction:
    pages: list[Page]
    method: str
    truncated: bool
    # PDF pages without a text layer (scans, blank pages) or that could not be read: OCR'd when OCR
    # is installed (`ocr_pages`), otherwise left empty and listed in `skipped_pages`.
    ocr_pages: tuple[int, ...] = ()
    skipped_pages: tuple[int, ...] = ()


def normalise(text: str) -> str:
    # One newline convention and no NULs, so offsets mean the same thing everywhere downstream.
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")


def cap_pages(texts: Iterable[str]) -> tuple[list[Page], bool]:
    pages: list[Page] = []
    total = 0
    for raw in texts:
        if len(pages) >= MAX_PAGES or total >= MAX_CHARS:
            return pages, True
        text = normalise(raw)
        if total + len(text) > MAX_CHARS:
            pages.append(Page(len(pages) + 1, text[: MAX_CHARS - total]))
            return pages, True
        pages.append(Page(len(pages) + 1, text))
        total += len(text)
    return pages, False


# Among legacy single-byte charsets that decode a file equally cleanly, the one a text file from a
# Western office is in: Windows-1252 (a superset of Latin-1's printable characters). Detection
# cannot tell it from Windows-1250 on text whose only non-ASCII characters are `§`, `é` or `ü`.
PREFERRED_LEGACY_CHARSET = "cp1252"


def read_text(path: Path) -> str:
    data = path.read_bytes()[: MAX_CHARS * 4]  # UTF-8 needs at most 4 bytes a character
    return decode_text(data)


def decode_text(data: bytes) -> str:
    """The text of `data`: UTF-8 (with or without a byte-order mark) when it is UTF-8, otherwise the
    charset `charset-normalizer` detects (Windows-1252 and Latin-1 files from older systems, other
    legacy charsets, UTF-16), Windows-1252 winning a tie."""
    if data.startswith(codecs.BOM_UTF8):
        return data[len(codecs.BOM_UTF8) :].decode("utf-8", errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    as_utf8 = data.decode("utf-8", errors="replace")
    if any(ord(c) > 0x7F and c != "\ufffd" for c in as_utf8):
        # Valid multi-byte sequences do not happen by accident in a legacy charset: this is UTF-8
        # with a few damaged bytes (or a character cut by the size cap), not another charset.
        return as_utf8
    matches = charset_normalizer.from_bytes(data)
    best = matches.best()
    if best is None:
        return as_utf8
    equally_clean = [m for m in matches if m.chaos <= best.chaos]
    if any(
        m.encoding == PREFERRED_LEGACY_CHARSET or PREFERRED_LEGACY_CHARSET in m.could_be_from_charset
        for m in equally_clean
    ):
        return data.decode(PREFERRED_LEGACY_CHARSET, errors="replace")
    return str(best).removeprefix("\ufeff")


def split_form_feeds(text: str) -> list[str]:
    return text.split("\f") if "\f" in text else [text]
