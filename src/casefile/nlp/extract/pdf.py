"""PDF text layers, and OCR (tesseract) for scanned PDFs and images when it is installed."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pypdf
from pypdf.errors import PyPdfError

from ..types import NoExtractableText, Page, ProcessingFailed
from .pages import MAX_PAGES, Extraction, cap_pages, normalise

OCR_TIMEOUT_SECONDS = 120
# A page whose text layer holds fewer words than this but which carries an image is a scan with
# a stamp on it ("Case 4:08-cv-02214 Document 26 Filed 01/29/2009 Page 1 of 2", the court's
# filing header): its text is read by OCR too, and kept when OCR reads more.
STAMP_MAX_WORDS = 25


def tesseract_available() -> bool:
    return shutil.which("tesseract") is not None


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


def pdf_pages(path: Path) -> Iterator[str]:
    reader = _open_pdf(path)
    for index in range(len(reader.pages)):
        try:
            yield reader.pages[index].extract_text() or ""
        except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
            raise ProcessingFailed(f"page {index + 1} of the PDF is damaged") from exc


def pdf_extraction(path: Path) -> Extraction:
    """The text layer of every page. A PDF with some pages scanned (or blank, or damaged) is not
    failed: those pages are OCR'd when OCR is installed, otherwise left empty and listed as
    skipped. A PDF without any text goes to `ocr_scanned_pdf` as a whole."""
    reader = _open_pdf(path)
    texts: list[str] = []
    damaged = 0
    for index in range(min(len(reader.pages), MAX_PAGES)):
        try:
            texts.append(reader.pages[index].extract_text() or "")
        except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError):
            texts.append("")
            damaged += 1
    pages, truncated = cap_pages(texts)
    truncated = truncated or len(reader.pages) > MAX_PAGES
    empty = [page.number for page in pages if not page.text.strip()]
    if len(empty) == len(pages):
        if damaged:
            raise ProcessingFailed("the PDF is damaged: no page could be read")
        return ocr_scanned_pdf(path)
    stamped = [
        page.number
        for page in pages
        if page.text.strip() and len(page.text.split()) < STAMP_MAX_WORDS and _has_image(reader, page.number)
    ]
    ocr_done: list[int] = []
    if (empty or stamped) and ocr_available():
        for number in sorted([*empty, *stamped]):
            text = normalise(_ocr_pdf_page(path, number))
            if len(text.split()) > len(pages[number - 1].text.split()):
                pages[number - 1] = Page(number, text)
                ocr_done.append(number)
    skipped = tuple(n for n in empty if n not in ocr_done)
    return Extraction(pages, "pdf-text", truncated, ocr_pages=tuple(ocr_done), skipped_pages=skipped)


def ocr_available() -> bool:
    """OCR of PDFs needs tesseract and a rasteriser (pdftoppm, from poppler-utils)."""
    return tesseract_available() and shutil.which("pdftoppm") is not None


def _has_image(reader: pypdf.PdfReader, number: int) -> bool:
    """Whether the page draws an image (a scanned page is one): an image XObject in its resources,
    directly or inside a form XObject."""
    try:
        resources = reader.pages[number - 1].get("/Resources")
        return _images_in(resources.get_object() if resources is not None else None, depth=0)
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError):
        return False


def _images_in(resources: object, depth: int) -> bool:
    if not isinstance(resources, dict) or depth > 3:
        return False
    objects = resources.get("/XObject")
    objects = objects.get_object() if objects is not None else {}
    for ref in objects.values() if isinstance(objects, dict) else []:
        item = ref.get_object()
        if item.get("/Subtype") == "/Image":
            return True
        if item.get("/Subtype") == "/Form" and _images_in(item.get("/Resources"), depth + 1):
            return True
    return False


def _ocr_pdf_page(path: Path, number: int) -> str:
    with tempfile.TemporaryDirectory(prefix="casefile-ocr-") as tmp:
        pdftoppm = str(shutil.which("pdftoppm"))
        _run([pdftoppm, "-r", "300", "-f", str(number), "-l", str(number), "-png", str(path), f"{tmp}/page"])
        images = sorted(Path(tmp).glob("page-*.png"))
        return _tesseract(images[0]) if images else ""


def ocr_scanned_pdf(path: Path) -> Extraction:
    """A PDF without a text layer: OCR its pages when tesseract and a rasteriser are available."""
    if not ocr_available():
        raise NoExtractableText("the PDF has no text layer and OCR is not available")
    with tempfile.TemporaryDirectory(prefix="casefile-ocr-") as tmp:
        _run([str(shutil.which("pdftoppm")), "-r", "300", "-png", str(path), f"{tmp}/page"])
        images = sorted(Path(tmp).glob("page-*.png"), key=lambda p: int(p.stem.rsplit("-", 1)[1]))
        texts = [_tesseract(image) for image in images[:MAX_PAGES]]
    pages, truncated = cap_pages(texts)
    if not any(p.text.strip() for p in pages):
        raise NoExtractableText("OCR found no text in the PDF")
    return Extraction(pages, "ocr", truncated or len(images) > MAX_PAGES)


# -- OCR ----------------------------------------------------------------------------------------


# Tesseract's OpenMP threads spin while they wait: on a 2-core machine one page took 11.1 s of
# CPU (6.8 of them in the kernel) and 12.3 s of wall time with them, 1.7 s of each with one thread,
# and the same text (a scanned filing of tests/ai/real, 2026-11-28). The AI pool already runs
# documents side by side.
_ONE_THREAD = {"OMP_THREAD_LIMIT": "1"}


def _run(command: list[str], env: dict[str, str] | None = None) -> str:
    try:
        done = subprocess.run(  # noqa: S603 - fixed program, our own temp paths
            command,
            capture_output=True,
            timeout=OCR_TIMEOUT_SECONDS,
            check=False,
            env={**os.environ, **env} if env else None,
        )
    except subprocess.TimeoutExpired as exc:
        raise ProcessingFailed("OCR took too long and was stopped") from exc
    if done.returncode != 0:
        raise ProcessingFailed("the image could not be read for OCR")
    return done.stdout.decode("utf-8", errors="replace")


def _tesseract(image: Path) -> str:
    return _run([str(shutil.which("tesseract")), str(image), "-"], env=_ONE_THREAD)


def ocr_image(path: Path) -> list[str]:
    if not tesseract_available():
        raise NoExtractableText("the file is an image and OCR (tesseract) is not installed")
    # Tesseract separates the frames of a multi-page TIFF with form feeds.
    return _tesseract(path).split("\f")
