"""Pages and the limits on them: a hostile file must not exhaust memory."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..types import Page

MAX_CHARS = 2_000_000
MAX_PAGES = 5_000


@dataclass(frozen=True)
class Extraction:
    pages: list[Page]
    method: str
    truncated: bool


def _normalise(text: str) -> str:
    # One newline convention and no NULs, so offsets mean the same thing everywhere downstream.
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")


def cap_pages(texts: Iterable[str]) -> tuple[list[Page], bool]:
    pages: list[Page] = []
    total = 0
    for raw in texts:
        if len(pages) >= MAX_PAGES or total >= MAX_CHARS:
            return pages, True
        text = _normalise(raw)
        if total + len(text) > MAX_CHARS:
            pages.append(Page(len(pages) + 1, text[: MAX_CHARS - total]))
            return pages, True
        pages.append(Page(len(pages) + 1, text))
        total += len(text)
    return pages, False


def read_text(path: Path) -> str:
    data = path.read_bytes()[: MAX_CHARS * 4]  # UTF-8 needs at most 4 bytes a character
    return data.decode("utf-8-sig", errors="replace")


def split_form_feeds(text: str) -> list[str]:
    return text.split("\f") if "\f" in text else [text]
