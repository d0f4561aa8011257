"""Office documents: DOCX (python-docx), ODT and XLSX (zip + XML, read with the standard library)."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from ..types import ProcessingFailed

# Zip bombs: every zip-based format (DOCX, ODT, XLSX) is refused before anything is unpacked if
# its parts unpack to more than these (a 0.3 MB DOCX can unpack to gigabytes of XML).
MAX_UNZIPPED_MEMBER_BYTES = 64 * 1024 * 1024  # one part: the XML we are willing to parse
MAX_UNZIPPED_TOTAL_BYTES = 200 * 1024 * 1024  # all parts: python-docx loads every part, images too

DOCX_DAMAGED = "the Word document is damaged or not a valid DOCX file"
ZIP_DAMAGED = "the file is a damaged archive (zip)"

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
# python-docx hands out lxml elements (typed loosely here: lxml ships no stubs in this project).


def refuse_zip_bomb(path: Path, damaged: str) -> None:
    """Fail (for good: the same file would fail again) a zip whose parts unpack to more than the
    bounds, judged from the sizes the archive declares, before anything is unpacked. `zipfile`
    (which python-docx uses too) never unpacks a part past its declared size: it stops there and
    fails the part's checksum, so the declared sizes bound the real ones."""
    try:
        with zipfile.ZipFile(path) as archive:
            sizes = [member.file_size for member in archive.infolist()]
    except (zipfile.BadZipFile, OSError) as exc:
        raise ProcessingFailed(damaged) from exc
    if max(sizes, default=0) > MAX_UNZIPPED_MEMBER_BYTES or sum(sizes) > MAX_UNZIPPED_TOTAL_BYTES:
        raise ProcessingFailed(
            f"the file unpacks to more than {MAX_UNZIPPED_MEMBER_BYTES // 2**20} MB in one part "
            f"or {MAX_UNZIPPED_TOTAL_BYTES // 2**20} MB in all (a zip bomb?); it is not processed"
        )


def docx_pages(path: Path) -> list[str]:
    import docx  # imported here: lxml + python-docx cost ~0.1 s and most files are not DOCX
    from docx.opc.exceptions import PackageNotFoundError

    refuse_zip_bomb(path, DOCX_DAMAGED)
    try:
        document = docx.Document(str(path))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise ProcessingFailed(DOCX_DAMAGED) from exc
    except Exception as exc:  # lxml raises its own XMLSyntaxError for broken XML
        raise ProcessingFailed(DOCX_DAMAGED) from exc
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


# -- ODT / XLSX ---------------------------------------------------------------------------------


def _zip_member(path: Path, name: str) -> bytes | None:
    try:
        with zipfile.ZipFile(path) as archive:
            try:
                info = archive.getinfo(name)
            except KeyError:
                return None
            with archive.open(info) as member:
                return member.read(MAX_UNZIPPED_MEMBER_BYTES)
    except (zipfile.BadZipFile, OSError, RuntimeError) as exc:
        raise ProcessingFailed(ZIP_DAMAGED) from exc


def _parse_xml(data: bytes) -> ElementTree.Element:
    try:
        # The stdlib parser resolves no external entities and (expat >= 2.4) limits entity expansion.
        return ElementTree.fromstring(data)  # noqa: S314
    except ElementTree.ParseError as exc:
        raise ProcessingFailed("the document's XML is damaged") from exc


_TEXT_NS = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"


def odt_text(path: Path) -> str:
    refuse_zip_bomb(path, ZIP_DAMAGED)
    data = _zip_member(path, "content.xml")
    if data is None:
        raise ProcessingFailed("the OpenDocument file has no content")
    root = _parse_xml(data)
    lines = ["".join(el.itertext()) for el in root.iter() if el.tag in (f"{_TEXT_NS}p", f"{_TEXT_NS}h")]
    return "\n".join(lines)


_SHEET_NS = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"


def xlsx_pages(path: Path) -> list[str]:
    refuse_zip_bomb(path, "the spreadsheet is a damaged archive (zip)")
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
