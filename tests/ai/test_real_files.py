"""Real files that used to trip the pipeline (issue 13, point 5): a PDF whose last page is a scan,
and a text file in Windows-1252; and scanned PDFs read by OCR (issue 31): one without any text
layer, one whose only text layer is the court's filing stamp. All are real documents
(tests/ai/real/README.md)."""

from __future__ import annotations

import codecs
import io
from pathlib import Path

import pypdf
import pytest

from casefile.ai.processing import process_document
from casefile.nlp.extract import extract_full
from casefile.nlp.extract.pages import decode_text
from casefile.nlp.extract.pdf import tesseract_available
from tests.ai import real_set
from tests.ai.test_pipeline import upload, wait_processed
from tests.support.assertions import ok
from tests.support.factories import new_case
from tests.support.servers import Api

FILES = real_set.ROOT / "files"


def _text_then_scan() -> bytes:
    """A five-page opinion with its text layer, then a one-page scan (no text layer)."""
    writer = pypdf.PdfWriter()
    writer.append(str(FILES / "missouri.pdf"))
    writer.append(str(FILES / "image-pdf-2.pdf"))
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


@pytest.mark.skipif(tesseract_available(), reason="checks the PDF without OCR installed")
def test_a_pdf_with_a_scanned_page_is_processed_and_the_page_noted_as_skipped(tmp_path: Path) -> None:
    path = tmp_path / "opinion-with-scan.pdf"
    path.write_bytes(_text_then_scan())

    ai = process_document(path, "application/pdf", title="Jagels v. State").ai

    assert ai["page_count"] == 6
    assert ai["extraction"] == {
        "method": "pdf-text",
        "truncated": False,
        "ocr_pages": [],
        "skipped_pages": [6],
    }
    # The text pages are analysed as usual.
    assert "2021-01-19" in {d["value"] for d in ai["entities"]["dates"]}
    assert ai["summary"]["sentences"] and all(s["page"] <= 5 for s in ai["summary"]["sentences"])


@pytest.mark.skipif(not tesseract_available(), reason="needs tesseract and pdftoppm")
def test_with_ocr_the_scanned_page_is_read(tmp_path: Path) -> None:
    path = tmp_path / "opinion-with-scan.pdf"
    path.write_bytes(_text_then_scan())

    extraction = extract_full(path, "application/pdf")

    assert extraction.ocr_pages == (6,) and extraction.skipped_pages == ()
    assert extraction.pages[5].text.strip()


def test_a_pdf_without_scans_skips_nothing() -> None:
    extraction = extract_full(FILES / "missouri.pdf", "application/pdf")
    assert len(extraction.pages) == 5
    assert extraction.skipped_pages == () and extraction.ocr_pages == ()


def test_a_windows_1252_text_file_is_decoded(tmp_path: Path) -> None:
    """The BVA decision is stored in Windows-1252 in its source (`§` is byte 0xA7)."""
    text = real_set.document_path("j01").read_text(encoding="utf-8")
    path = tmp_path / "bva-decision.txt"
    path.write_bytes(text.encode("cp1252"))
    utf8 = tmp_path / "bva-decision-utf8.txt"
    utf8.write_bytes(text.encode("utf-8"))

    ai = process_document(path, "text/plain").ai
    extraction = extract_full(path, "text/plain")

    assert extraction.pages[0].text == text
    assert "\ufffd" not in extraction.pages[0].text
    citations = {c["value"] for c in ai["entities"]["citations"]}
    assert "38 U.S.C. § 5110" in citations
    assert citations == {c["value"] for c in process_document(utf8, "text/plain").ai["entities"]["citations"]}


def test_text_decoding_keeps_utf8_and_reads_other_charsets() -> None:
    sample = "Judgment for $1,200 under § 3 — Müller v. Señor Café"
    assert decode_text(sample.encode("utf-8")) == sample
    assert decode_text(codecs.BOM_UTF8 + sample.encode("utf-8")) == sample
    assert decode_text(sample.encode("utf-16")) == sample  # with its byte-order mark
    assert decode_text(sample.encode("cp1252")) == sample
    assert decode_text(sample.replace("—", "-").encode("latin-1")) == sample.replace("—", "-")
    # UTF-8 with one damaged byte stays UTF-8 (the damage replaced), not another charset.
    assert decode_text(sample.encode("utf-8") + b"\xff") == sample + "\ufffd"


@pytest.mark.skipif(not tesseract_available(), reason="needs tesseract and pdftoppm (.ci/run installs them)")
def test_scanned_pdfs_are_read_by_ocr_and_found_by_search(make_server) -> None:
    """A scan without a text layer (a Tennessee appeals board opinion) and a scan whose only text
    layer is the filing stamp on each page (a stipulation and order, N.D. Cal.): both are read by
    OCR, analysed like any other document and found by words only the images hold."""
    server: Api = make_server(ai_enabled=True)
    with server.admin() as admin:
        case_id = new_case(admin)["id"]
        opinion = upload(admin, case_id, real_set.document_path("s02").read_bytes(), "goodwin.pdf")
        stipulation = upload(admin, case_id, real_set.document_path("s03").read_bytes(), "stipulation.pdf")
        opinion, stipulation = wait_processed(admin, opinion["id"]), wait_processed(admin, stipulation["id"])

        assert opinion["processing_status"] == "completed", opinion
        assert opinion["ai"]["extraction"]["method"] == "ocr"
        assert stipulation["processing_status"] == "completed", stipulation
        # Both pages had the stamp as their only text: both were read by OCR.
        assert stipulation["ai"]["extraction"]["ocr_pages"] == [1, 2]
        assert stipulation["ai"]["extraction"]["skipped_pages"] == []
        organizations = " ".join(o["text"] for o in stipulation["ai"]["entities"]["organizations"])
        assert "RLI" in organizations and "Shimmick" in organizations
        assert "2009-05-15" in {d["value"] for d in stipulation["ai"]["entities"]["dates"]}
        assert "Morristown" in " ".join(o["text"] for o in opinion["ai"]["entities"]["organizations"])

        for query, document in (
            ("Shimmick expert discovery cut-off", stipulation),
            ("Morristown Driver", opinion),
        ):
            hits = ok(admin.get("/search", params={"q": query, "kind": "document"}))
            assert hits and hits[0]["id"] == document["id"], (query, hits)
