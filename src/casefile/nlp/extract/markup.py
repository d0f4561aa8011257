"""Text inside markup: HTML (its visible text) and RTF (with its page breaks)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from ..resources import word_set
from ..types import ProcessingFailed
from .pages import MAX_CHARS, split_form_feeds

# -- RTF ----------------------------------------------------------------------------------------

_RTF_PAGE = re.compile(r"\\page(?![a-zA-Z])[ ]?")


def rtf_pages(path: Path) -> list[str]:
    from striprtf.striprtf import rtf_to_text

    # RTF is 7-bit with escapes; latin-1 maps every byte, so decoding cannot fail.
    source = path.read_bytes()[: MAX_CHARS * 4].decode("latin-1")
    # A form feed survives striprtf as plain text, so it marks where `\page` was.
    try:
        text = str(rtf_to_text(_RTF_PAGE.sub("\f", source), errors="replace"))  # type: ignore[no-untyped-call]
    except (ValueError, IndexError, LookupError) as exc:
        raise ProcessingFailed("the RTF file is damaged") from exc
    return split_form_feeds(text)


# -- HTML ---------------------------------------------------------------------------------------
_BLOCK_TAGS = word_set("html_block_tags")
_SKIPPED_TAGS = frozenset({"script", "style", "noscript", "template", "head"})


class _TextCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED_TAGS and tag != "head":
            self._skip_depth += 1
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED_TAGS and tag != "head":
            self._skip_depth = max(0, self._skip_depth - 1)
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skip_depth:
            self.parts.append(data)


def html_to_text(html: str) -> str:
    """Visible text of an HTML document: scripts and styles dropped, a line break per block."""
    collector = _TextCollector()
    collector.feed(html)
    collector.close()
    text = "".join(collector.parts)
    # Source indentation and line wrapping are not content: collapse them.
    lines = (re.sub(r"[ \t\u00a0]+", " ", line).strip() for line in text.split("\n"))
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
