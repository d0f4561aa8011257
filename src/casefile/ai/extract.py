"""Text extraction, page by page, from the file types uploads can have (`documents/sniff.py`).

`extract(path, file_type)` returns the pages and the method used. Page numbers are real where the
format has pages (PDF; DOCX explicit page breaks; RTF `\\page`; form feeds in text; one page per
XLSX sheet, per TIFF frame), otherwise the whole text is page 1.

Limits, so that a hostile file cannot exhaust memory: at most `MAX_CHARS` characters and
`MAX_PAGES` pages are kept; past either cap the text is cut (at a page boundary where possible) and
`Extraction.truncated` is true. Zip members (DOCX/ODT/XLSX) are read with a size cap too.

Errors: `NoExtractableText` when there is no text and OCR cannot help (no `tesseract` on PATH, or a
format with no extractor: legacy `.doc`), `ProcessingFailed` with a user-readable reason when the
file is damaged or encrypted.
"""

from __future__ import annotations

import email
import re
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from email import policy
from email.message import EmailMessage
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pypdf
from pypdf.errors import PyPdfError

from casefile.ai.types import NoExtractableText, Page, ProcessingFailed

MAX_CHARS = 2_000_000
MAX_PAGES = 5_000
MAX_ZIP_MEMBER_BYTES = 64 * 1024 * 1024  # uncompressed XML we are willing to parse
OCR_TIMEOUT_SECONDS = 120

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


@dataclass(frozen=True)
class Extraction:
    pages: list[Page]
    method: str
    truncated: bool


def extract(path: Path, file_type: str) -> tuple[list[Page], str]:
    """The pages of `path` and the method (see `extract_full` for the truncation flag)."""
    result = extract_full(path, file_type)
    return result.pages, result.method


def extract_full(path: Path, file_type: str) -> Extraction:
    texts, method = _raw_pages(path, file_type)
    pages, truncated = _cap(texts)
    if not any(p.text.strip() for p in pages):
        if method == "pdf-text":
            return _ocr_scanned_pdf(path)
        raise NoExtractableText("the file contains no text")
    return Extraction(pages, method, truncated)


def tesseract_available() -> bool:
    return shutil.which("tesseract") is not None


def _raw_pages(path: Path, file_type: str) -> tuple[Iterable[str], str]:
    if file_type == PDF:
        return _pdf_pages(path), "pdf-text"
    if file_type == DOCX:
        return _docx_pages(path), "docx"
    if file_type in TEXT_TYPES:
        return _split_form_feeds(_read_text(path)), "text"
    if file_type == HTML:
        return [html_to_text(_read_text(path))], "html"
    if file_type == EML:
        return [_eml_text(path)], "eml"
    if file_type == RTF:
        return _rtf_pages(path), "rtf"
    if file_type == ODT:
        return [_odt_text(path)], "odt"
    if file_type == XLSX:
        return _xlsx_pages(path), "xlsx"
    if file_type in IMAGE_TYPES:
        return _ocr_image(path), "ocr"
    if file_type == DOC:
        raise NoExtractableText("legacy Word (.doc) files are not supported for text extraction")
    raise NoExtractableText(f"no text extractor for {file_type}")


# -- limits -------------------------------------------------------------------------------------


def _normalise(text: str) -> str:
    # One newline convention and no NULs, so offsets mean the same thing everywhere downstream.
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")


def _cap(texts: Iterable[str]) -> tuple[list[Page], bool]:
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


def _read_text(path: Path) -> str:
    data = path.read_bytes()[: MAX_CHARS * 4]  # UTF-8 needs at most 4 bytes a character
    return data.decode("utf-8-sig", errors="replace")


def _split_form_feeds(text: str) -> list[str]:
    return text.split("\f") if "\f" in text else [text]


# -- PDF ----------------------------------------------------------------------------------------


def _open_pdf(path: Path) -> pypdf.PdfReader:
    try:
        reader = pypdf.PdfReader(path, strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            raise ProcessingFailed("the PDF is password-protected")
        _ = len(reader.pages)  # forces the page tree to be read: damage shows up here
    except ProcessingFailed:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError, OSError) as exc:
        raise ProcessingFailed("the PDF is damaged or not a valid PDF file") from exc
    except NotImplementedError as exc:  # e.g. an unsupported encryption algorithm
        raise ProcessingFailed("the PDF uses an encryption method that cannot be opened") from exc
    return reader


def _pdf_pages(path: Path) -> Iterator[str]:
    reader = _open_pdf(path)
    for index in range(len(reader.pages)):
        try:
            yield reader.pages[index].extract_text() or ""
        except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
            raise ProcessingFailed(f"page {index + 1} of the PDF is damaged") from exc


def _ocr_scanned_pdf(path: Path) -> Extraction:
    """A PDF without a text layer: OCR its pages when tesseract and a rasteriser are available."""
    if not tesseract_available() or shutil.which("pdftoppm") is None:
        raise NoExtractableText("the PDF has no text layer and OCR is not available")
    with tempfile.TemporaryDirectory(prefix="casefile-ocr-") as tmp:
        _run([str(shutil.which("pdftoppm")), "-r", "300", "-png", str(path), f"{tmp}/page"])
        images = sorted(Path(tmp).glob("page-*.png"), key=lambda p: int(p.stem.rsplit("-", 1)[1]))
        texts = [_tesseract(image) for image in images[:MAX_PAGES]]
    pages, truncated = _cap(texts)
    if not any(p.text.strip() for p in pages):
        raise NoExtractableText("OCR found no text in the PDF")
    return Extraction(pages, "ocr", truncated or len(images) > MAX_PAGES)


# -- OCR ----------------------------------------------------------------------------------------


def _run(command: list[str]) -> str:
    try:
        done = subprocess.run(  # noqa: S603 - fixed program, our own temp paths
            command, capture_output=True, timeout=OCR_TIMEOUT_SECONDS, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise ProcessingFailed("OCR took too long and was stopped") from exc
    if done.returncode != 0:
        raise ProcessingFailed("the image could not be read for OCR")
    return done.stdout.decode("utf-8", errors="replace")


def _tesseract(image: Path) -> str:
    return _run([str(shutil.which("tesseract")), str(image), "-"])


def _ocr_image(path: Path) -> list[str]:
    if not tesseract_available():
        raise NoExtractableText("the file is an image and OCR (tesseract) is not installed")
    # Tesseract separates the frames of a multi-page TIFF with form feeds.
    return _tesseract(path).split("\f")


# -- DOCX ---------------------------------------------------------------------------------------

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
# python-docx hands out lxml elements (typed loosely here: lxml ships no stubs in this project).


def _docx_pages(path: Path) -> list[str]:
    import docx  # imported here: lxml + python-docx cost ~0.1 s and most files are not DOCX
    from docx.opc.exceptions import PackageNotFoundError

    try:
        document = docx.Document(str(path))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise ProcessingFailed("the Word document is damaged or not a valid DOCX file") from exc
    except Exception as exc:  # lxml raises its own XMLSyntaxError for broken XML
        raise ProcessingFailed("the Word document is damaged or not a valid DOCX file") from exc
    pages: list[list[str]] = [[]]
    for child in document.element.body.iterchildren():
        if child.tag == f"{_W}p":
            _docx_paragraph(child, pages)
        elif child.tag == f"{_W}tbl":
            pages[-1].extend(_docx_table_rows(child))
    return ["\n".join(lines) for lines in pages]


def _docx_paragraph(paragraph: Any, pages: list[list[str]]) -> None:
    """Appends the paragraph's text, starting a new page at each explicit page break."""
    line: list[str] = []
    for node in paragraph.iter(f"{_W}t", f"{_W}tab", f"{_W}br", f"{_W}cr"):
        if node.tag == f"{_W}t":
            line.append(node.text or "")
        elif node.tag == f"{_W}tab":
            line.append("\t")
        elif node.get(f"{_W}type") == "page":
            if "".join(line).strip():
                pages[-1].append("".join(line))
            line = []
            pages.append([])
        else:
            line.append("\n")
    pages[-1].append("".join(line))


def _docx_table_rows(table: Any) -> list[str]:
    rows = []
    for row in table.iter(f"{_W}tr"):
        cells = []
        for cell in row.iter(f"{_W}tc"):
            cells.append(
                " ".join("".join(t.text or "" for t in p.iter(f"{_W}t")) for p in cell.iter(f"{_W}p"))
            )
        rows.append("\t".join(cells))
    return rows


# -- ODT / XLSX (zip + XML, read with the standard library) --------------------------------------


def _zip_member(path: Path, name: str) -> bytes | None:
    try:
        with zipfile.ZipFile(path) as archive:
            try:
                info = archive.getinfo(name)
            except KeyError:
                return None
            with archive.open(info) as member:
                return member.read(MAX_ZIP_MEMBER_BYTES)
    except (zipfile.BadZipFile, OSError, RuntimeError) as exc:
        raise ProcessingFailed("the file is a damaged archive (zip)") from exc


def _parse_xml(data: bytes) -> ElementTree.Element:
    try:
        # The stdlib parser resolves no external entities and (expat >= 2.4) limits entity expansion.
        return ElementTree.fromstring(data)  # noqa: S314
    except ElementTree.ParseError as exc:
        raise ProcessingFailed("the document's XML is damaged") from exc


_TEXT_NS = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"


def _odt_text(path: Path) -> str:
    data = _zip_member(path, "content.xml")
    if data is None:
        raise ProcessingFailed("the OpenDocument file has no content")
    root = _parse_xml(data)
    lines = ["".join(el.itertext()) for el in root.iter() if el.tag in (f"{_TEXT_NS}p", f"{_TEXT_NS}h")]
    return "\n".join(lines)


_SHEET_NS = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"


def _xlsx_pages(path: Path) -> list[str]:
    shared = _xlsx_shared_strings(path)
    try:
        with zipfile.ZipFile(path) as archive:
            names = [n for n in archive.namelist() if re.fullmatch(r"xl/worksheets/sheet\d+\.xml", n)]
    except zipfile.BadZipFile as exc:
        raise ProcessingFailed("the spreadsheet is a damaged archive (zip)") from exc
    names.sort(key=lambda n: int(re.sub(r"\D", "", n.rsplit("/", 1)[1])))
    pages = []
    for name in names:
        data = _zip_member(path, name)
        if data is not None:
            pages.append(_xlsx_sheet_text(_parse_xml(data), shared))
    return pages


def _xlsx_shared_strings(path: Path) -> list[str]:
    data = _zip_member(path, "xl/sharedStrings.xml")
    if data is None:
        return []
    return [
        "".join(t.text or "" for t in si.iter(f"{_SHEET_NS}t"))
        for si in _parse_xml(data).iter(f"{_SHEET_NS}si")
    ]


def _xlsx_sheet_text(sheet: ElementTree.Element, shared: list[str]) -> str:
    rows = []
    for row in sheet.iter(f"{_SHEET_NS}row"):
        cells = []
        for cell in row.iter(f"{_SHEET_NS}c"):
            kind, value = cell.get("t"), cell.findtext(f"{_SHEET_NS}v") or ""
            if kind == "s" and value.isdigit() and int(value) < len(shared):
                value = shared[int(value)]
            elif kind == "inlineStr":
                value = "".join(t.text or "" for t in cell.iter(f"{_SHEET_NS}t"))
            if value:
                cells.append(value)
        if cells:
            rows.append("\t".join(cells))
    return "\n".join(rows)


# -- RTF ----------------------------------------------------------------------------------------

_RTF_PAGE = re.compile(r"\\page(?![a-zA-Z])[ ]?")


def _rtf_pages(path: Path) -> list[str]:
    from striprtf.striprtf import rtf_to_text

    # RTF is 7-bit with escapes; latin-1 maps every byte, so decoding cannot fail.
    source = path.read_bytes()[: MAX_CHARS * 4].decode("latin-1")
    # A form feed survives striprtf as plain text, so it marks where `\page` was.
    try:
        text = str(rtf_to_text(_RTF_PAGE.sub("\f", source), errors="replace"))  # type: ignore[no-untyped-call]
    except (ValueError, IndexError, LookupError) as exc:
        raise ProcessingFailed("the RTF file is damaged") from exc
    return _split_form_feeds(text)


# -- HTML ---------------------------------------------------------------------------------------

_BLOCK_TAGS = frozenset(
    [
        "address",
        "article",
        "aside",
        "blockquote",
        "br",
        "dd",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hr",
        "li",
        "main",
        "nav",
        "ol",
        "p",
        "pre",
        "section",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "title",
        "tr",
        "ul",
    ]
)
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


# -- e-mail -------------------------------------------------------------------------------------


def _eml_text(path: Path) -> str:
    message = email.message_from_bytes(path.read_bytes(), policy=policy.default)
    if not isinstance(message, EmailMessage):  # always true with policy.default; narrows the type
        raise ProcessingFailed("the e-mail could not be parsed")
    lines = []
    for header in ("From", "To", "Cc", "Date", "Subject"):
        value = message.get(header)
        if value:
            lines.append(f"{header}: {value}")
    lines.append("")
    lines.append(_eml_body(message))
    attachments = [part.get_filename() or "(unnamed)" for part in message.iter_attachments()]
    if attachments:
        lines.append("")
        lines.append("Attachments: " + ", ".join(attachments))
    return "\n".join(lines)


def _eml_body(message: EmailMessage) -> str:
    body = message.get_body(preferencelist=("plain", "html"))
    if body is None:
        return ""
    try:
        content = body.get_content()
    except (LookupError, ValueError, AssertionError):  # unknown charset or broken encoding
        payload = body.get_payload(decode=True)
        content = payload.decode("utf-8", errors="replace") if isinstance(payload, bytes) else ""
    if not isinstance(content, str):
        return ""
    return html_to_text(content) if body.get_content_subtype() == "html" else content
