"""Text extraction, page by page, from the file types uploads can have (`storage/sniff.py`).

`extract(path, file_type)` returns the pages and the method used. Page numbers are real where the
format has pages (PDF; DOCX explicit page breaks; RTF `\\page`; form feeds in text; one page per
XLSX sheet, per TIFF frame), otherwise the whole text is page 1.

Limits (`pages.py`), so that a hostile file cannot exhaust memory: at most `MAX_CHARS` characters and
`MAX_PAGES` pages are kept; past either cap the text is cut (at a page boundary where possible) and
`Extraction.truncated` is true. Zip members (DOCX/ODT/XLSX) are read with a size cap too.

A PDF with some pages scanned (no text layer) is not failed: those pages are OCR'd when OCR is
installed, otherwise left empty and listed in `Extraction.skipped_pages`. Text files are UTF-8 or,
failing that, the charset `charset-normalizer` detects (Windows-1252/Latin-1 files are common).

Errors: `NoExtractableText` when there is no text and OCR cannot help (no `tesseract` on PATH, or a
format with no extractor: legacy `.doc`), `ProcessingFailed` with a user-readable reason when the
file is damaged or encrypted.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..types import NoExtractableText, Page
from .mail import eml_text
from .markup import html_to_text, rtf_pages
from .office import docx_pages, odt_text, xlsx_pages
from .pages import Extraction, cap_pages, read_text, split_form_feeds
from .pdf import ocr_image, pdf_extraction

PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
DOC = "application/msword"
ODT = "application/vnd.oasis.opendocument.text"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
RTF = "application/rtf"
EML = "message/rfc822"
HTML = "text/html"
TEXT_TYPES = frozenset({"text/plain", "text/markdown", "text/csv"})
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/tiff"})


def extract(path: Path, file_type: str) -> tuple[list[Page], str]:
    """The pages of `path` and the method (see `extract_full` for the truncation flag)."""
    result = extract_full(path, file_type)
    return result.pages, result.method


def extract_full(path: Path, file_type: str) -> Extraction:
    if file_type == PDF:
        return pdf_extraction(path)
    texts, method = _raw_pages(path, file_type)
    pages, truncated = cap_pages(texts)
    if not any(p.text.strip() for p in pages):
        raise NoExtractableText("the file contains no text")
    return Extraction(pages, method, truncated)


def _raw_pages(path: Path, file_type: str) -> tuple[Iterable[str], str]:
    if file_type == DOCX:
        return docx_pages(path), "docx"
    if file_type in TEXT_TYPES:
        return split_form_feeds(read_text(path)), "text"
    if file_type == HTML:
        return [html_to_text(read_text(path))], "html"
    if file_type == EML:
        return [eml_text(path)], "eml"
    if file_type == RTF:
        return rtf_pages(path), "rtf"
    if file_type == ODT:
        return [odt_text(path)], "odt"
    if file_type == XLSX:
        return xlsx_pages(path), "xlsx"
    if file_type in IMAGE_TYPES:
        return ocr_image(path), "ocr"
    if file_type == DOC:
        raise NoExtractableText("legacy Word (.doc) files are not supported for text extraction")
    raise NoExtractableText(f"no text extractor for {file_type}")
