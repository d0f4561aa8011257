"""The pure AI core (casefile.nlp and casefile.ai.processing): extraction per format from files
built here, offsets that trace back to the text, the skipped/failed outcomes, determinism and the
embedding model's behaviour."""

from __future__ import annotations

import shutil
import struct
import zlib
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from casefile.ai.processing import PIPELINE_VERSION, ProcessedDocument, process_document, summarize_case
from casefile.nlp.embedder import get_embedder
from casefile.nlp.extract import extract, extract_full, office
from casefile.nlp.types import EMBEDDING_DIM, NoExtractableText, ProcessingFailed
from tests.support.factories import inflated, make_docx, office_archive, text_pdf

PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"

LEASE_PAGE_1 = (
    "RESIDENTIAL LEASE. This Lease is made on March 3, 2024 between Harbor Homes LLC (Landlord) and "
    "Ms. Jane Porter (Tenant). Tenant shall pay rent of $2,400.00 on the first day of each month."
)
LEASE_PAGE_2 = (
    "DEFAULT. If Tenant fails to pay rent within five days after it is due, Landlord may terminate "
    "this Lease. See Brown v. Board of Education, 347 U.S. 483 (1954) and 42 U.S.C. § 1983."
)


def make_text_pdf(path: Path, pages: list[str]) -> None:
    path.write_bytes(text_pdf(pages))


def _assert_offsets(result: ProcessedDocument) -> None:
    """What a user is shown can be found at its page and offsets: chunks and summary sentences."""
    assert result.passages
    for chunk in result.passages:
        assert result.pages[chunk.page - 1].text[chunk.start : chunk.end] == chunk.text
    for sentence in result.ai["summary"]["sentences"]:
        assert (
            result.pages[sentence["page"] - 1].text[sentence["start"] : sentence["end"]] == sentence["text"]
        )
    for items in result.ai["entities"].values():
        for item in items:
            for occurrence in item["occurrences"]:
                assert result.pages[occurrence["page"] - 1].text[occurrence["start"] : occurrence["end"]]


# -- extraction per format ---------------------------------------------------------------------


def test_pdf_keeps_page_boundaries(tmp_path: Path) -> None:
    path = tmp_path / "lease.pdf"
    make_text_pdf(path, [LEASE_PAGE_1, LEASE_PAGE_2, "Signed by the parties on March 4, 2024."])
    pages, method = extract(path, PDF)
    assert method == "pdf-text"
    assert [p.number for p in pages] == [1, 2, 3]
    assert "Harbor Homes LLC" in pages[0].text and "347 U.S. 483" in pages[1].text
    assert "347 U.S. 483" not in pages[0].text

    result = process_document(path, PDF, title="Lease")
    _assert_offsets(result)
    assert result.ai["page_count"] == 3
    citation = next(c for c in result.ai["entities"]["citations"] if c["value"] == "347 U.S. 483")
    assert {o["page"] for o in citation["occurrences"]} == {2}
    assert citation["type"] == "case" and citation["reporter"] == "U.S."


def test_docx_paragraphs_tables_and_page_breaks(tmp_path: Path) -> None:
    import docx
    from docx.enum.text import WD_BREAK

    document = docx.Document()
    document.add_paragraph(LEASE_PAGE_1)
    table = document.add_table(rows=1, cols=2)
    table.cell(0, 0).text = "Deposit"
    table.cell(0, 1).text = "$4,800.00"
    document.add_paragraph().add_run().add_break(WD_BREAK.PAGE)
    document.add_paragraph(LEASE_PAGE_2)
    path = tmp_path / "lease.docx"
    document.save(str(path))

    pages, method = extract(path, DOCX)
    assert method == "docx"
    assert len(pages) == 2
    assert "Deposit\t$4,800.00" in pages[0].text
    assert "DEFAULT" in pages[1].text and "DEFAULT" not in pages[0].text
    result = process_document(path, DOCX)
    _assert_offsets(result)
    amounts = {m["value"]["amount"] for m in result.ai["entities"]["money"]}
    assert {"2400.00", "4800.00"} <= amounts


def test_text_markdown_split_on_form_feed(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text(f"# Notes\n\n{LEASE_PAGE_1}\f{LEASE_PAGE_2}", encoding="utf-8")
    pages, method = extract(path, "text/markdown")
    assert method == "text" and len(pages) == 2
    assert pages[1].text.startswith("DEFAULT")


def test_html_skips_scripts_and_breaks_blocks(tmp_path: Path) -> None:
    path = tmp_path / "page.html"
    path.write_text(
        "<!doctype html><html><head><title>T</title><style>p{color:red}</style></head><body>"
        "<h1>Notice</h1><p>Rent of &euro;1.200,50 is due.</p><script>alert('x')</script>"
        "<p>Second&nbsp;paragraph.</p></body></html>",
        encoding="utf-8",
    )
    pages, method = extract(path, "text/html")
    assert method == "html"
    text = pages[0].text
    assert "alert" not in text and "color" not in text
    assert "Notice\n" in text and "Rent of €1.200,50 is due." in text
    assert "Second paragraph." in text


def test_eml_headers_body_and_attachments(tmp_path: Path) -> None:
    message = EmailMessage()
    message["From"] = "Laura Chen <lchen@example.com>"
    message["To"] = "Jonathan Pierce <jp@example.com>"
    message["Subject"] = "Settlement offer"
    message["Date"] = "Mon, 15 Jan 2024 16:42:10 -0800"
    message.set_content("We offer €38.000,00 to settle.\n")
    message.add_alternative("<p>We offer <b>€38.000,00</b> to settle.</p>", subtype="html")
    message.add_attachment(b"%PDF-1.4", maintype="application", subtype="pdf", filename="release.pdf")
    path = tmp_path / "mail.eml"
    path.write_bytes(message.as_bytes())

    pages, method = extract(path, "message/rfc822")
    assert method == "eml"
    text = pages[0].text
    assert "From: Laura Chen <lchen@example.com>" in text and "Subject: Settlement offer" in text
    assert "We offer €38.000,00 to settle." in text
    assert "Attachments: release.pdf" in text and "%PDF" not in text
    result = process_document(path, "message/rfc822")
    assert {"amount": "38000.00", "currency": "EUR"} in [m["value"] for m in result.ai["entities"]["money"]]
    assert "2024-01-15" in [d["value"] for d in result.ai["entities"]["dates"]]


def test_rtf_pages_and_escapes(tmp_path: Path) -> None:
    path = tmp_path / "letter.rtf"
    path.write_bytes(
        rb"{\rtf1\ansi\ansicpg1252{\fonttbl{\f0 Times;}}\f0 The fee is \'a3750.\par Page one ends.\page "
        rb"Page two begins.\par}"
    )
    pages, method = extract(path, "application/rtf")
    assert method == "rtf" and len(pages) == 2
    assert "£750" in pages[0].text and "Page two begins." in pages[1].text


def test_legacy_doc_is_not_extractable(tmp_path: Path) -> None:
    path = tmp_path / "old.doc"
    path.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 512)
    with pytest.raises(NoExtractableText):
        process_document(path, "application/msword")


# -- outcomes for files without text or damaged files ------------------------------------------


def _png(path: Path) -> None:
    raw = b"\x00\xff\xff\xff" * 1  # one white pixel, RGB, filter byte 0
    chunks = [
        (b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)),
        (b"IDAT", zlib.compress(raw)),
        (b"IEND", b""),
    ]
    out = b"\x89PNG\r\n\x1a\n"
    for kind, data in chunks:
        out += struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    path.write_bytes(out)


def test_image_is_skipped_without_tesseract(tmp_path: Path) -> None:
    path = tmp_path / "scan.png"
    _png(path)
    if shutil.which("tesseract") is None:
        with pytest.raises(NoExtractableText):
            process_document(path, "image/png")
    else:
        # With OCR available a blank image still has no text: skipped, not failed.
        with pytest.raises(NoExtractableText):
            process_document(path, "image/png")


def test_pdf_without_text_layer_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "scanned.pdf"
    make_text_pdf(path, [""])
    if shutil.which("tesseract") is None or shutil.which("pdftoppm") is None:
        with pytest.raises(NoExtractableText):
            process_document(path, PDF)


@pytest.mark.parametrize(
    "content",
    [b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R", b"%PDF-1.7\n" + bytes(range(256)) * 8, b""],
    ids=["truncated", "garbage", "empty"],
)
def test_damaged_pdf_fails_with_a_reason(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "broken.pdf"
    path.write_bytes(content)
    with pytest.raises(ProcessingFailed) as caught:
        process_document(path, PDF)
    reason = str(caught.value)
    assert reason and "Traceback" not in reason and "\n" not in reason


def test_truncated_real_pdf_fails_or_keeps_what_it_can(tmp_path: Path) -> None:
    whole = tmp_path / "whole.pdf"
    make_text_pdf(whole, [LEASE_PAGE_1, LEASE_PAGE_2])
    cut = tmp_path / "cut.pdf"
    cut.write_bytes(whole.read_bytes()[: len(whole.read_bytes()) // 3])
    try:
        result = process_document(cut, PDF)
    except (ProcessingFailed, NoExtractableText):
        return
    _assert_offsets(result)  # pypdf may recover part of it: then it must still be consistent


def test_empty_text_file_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "empty.txt"
    path.write_text("  \n\n ", encoding="utf-8")
    with pytest.raises(NoExtractableText):
        process_document(path, "text/plain")


def test_text_beyond_the_cap_is_truncated_and_flagged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from casefile.nlp.extract import pages as extract_module

    monkeypatch.setattr(extract_module, "MAX_CHARS", 1000)
    path = tmp_path / "long.txt"
    path.write_text("The tenant paid rent. " * 200, encoding="utf-8")
    result = extract_full(path, "text/plain")
    assert result.truncated
    assert sum(len(p.text) for p in result.pages) == 1000


# -- analysis ----------------------------------------------------------------------------------


def _long_document() -> str:
    paragraphs = [
        "This Commercial Lease is made on January 15, 2024 between Harborview Properties LLC and "
        "Bluefin Analytics, Inc. for office space at 1200 Market Street.",
        "Tenant shall pay monthly base rent of $18,600.00 on the first day of each month, and a late "
        "charge of $930.00 applies to rent received more than five days late.",
        "If Tenant fails to pay rent when due and does not cure within ten days after notice, Landlord "
        "may terminate this Lease and recover possession of the premises.",
    ]
    filler = (
        "Tenant shall maintain the premises in good repair and shall comply with all laws applicable "
        "to its use of the premises, including building rules adopted by Landlord from time to time. "
    )
    return "\n\n".join(paragraphs + [filler * 6] * 4)


def test_chunks_are_sentence_aligned_and_sized(tmp_path: Path) -> None:
    path = tmp_path / "lease.txt"
    path.write_text(_long_document(), encoding="utf-8")
    result = process_document(path, "text/plain", title="Lease")
    _assert_offsets(result)
    assert len(result.passages) >= 3
    for chunk in result.passages:
        assert len(chunk.text.split()) <= 200
        assert chunk.text[-1] in ".!?", chunk.text[-20:]  # ends at a sentence end
    assert [c.index for c in result.passages] == list(range(len(result.passages)))
    assert result.vectors.shape == (len(result.passages), EMBEDDING_DIM)


def test_ai_shape_and_provenance(tmp_path: Path) -> None:
    path = tmp_path / "lease.txt"
    text = _long_document()
    path.write_text(text, encoding="utf-8")
    ai = process_document(path, "text/plain").ai
    assert set(ai) == {
        "summary",
        "language",
        "page_count",
        "word_count",
        "entities",
        "suggested_type",
        "keywords",
        "extraction",
        "provenance",
    }
    assert ai["language"] == "en"
    assert ai["word_count"] == len(text.split())
    assert 3 <= len(ai["summary"]["sentences"]) <= 5
    assert ai["suggested_type"]["label"] == "contract"
    assert 0.0 < ai["suggested_type"]["confidence"] <= 1.0
    assert ai["keywords"] and all(isinstance(k, str) for k in ai["keywords"])
    assert ai["extraction"] == {"method": "text", "truncated": False}
    import hashlib

    assert ai["provenance"]["text_sha256"] == hashlib.sha256(text.encode()).hexdigest()
    assert ai["provenance"]["pipeline_version"] == PIPELINE_VERSION
    assert ai["provenance"]["embedding_model"] == get_embedder().model_id


def test_processing_is_deterministic(tmp_path: Path) -> None:
    path = tmp_path / "lease.pdf"
    make_text_pdf(path, [LEASE_PAGE_1, LEASE_PAGE_2])
    first, second = process_document(path, PDF), process_document(path, PDF)
    assert first.ai == second.ai
    assert first.passages == second.passages
    assert np.array_equal(first.vectors, second.vectors)


def test_language_is_und_for_too_little_text(tmp_path: Path) -> None:
    path = tmp_path / "cite.txt"
    path.write_text("347 U.S. 483", encoding="utf-8")
    assert process_document(path, "text/plain").ai["language"] == "und"


# -- embeddings --------------------------------------------------------------------------------


def test_embeddings_are_normalised_float32() -> None:
    vectors = get_embedder().embed(["The tenant failed to pay rent."] * 40 + ["A second batch item."])
    assert vectors.dtype == np.float32 and vectors.shape == (41, EMBEDDING_DIM)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.allclose(vectors[0], vectors[39], atol=1e-6)  # batching does not change a row
    assert get_embedder().embed([]).shape == (0, EMBEDDING_DIM)


def test_embeddings_mean_what_lawyers_mean() -> None:
    lease_default, rent, judgment = get_embedder().embed(
        [
            "The lessee defaulted on its lease payments.",
            "The tenant failed to pay rent.",
            "The court granted summary judgment.",
        ]
    )
    assert float(lease_default @ rent) > float(lease_default @ judgment) + 0.1


# -- case summary ------------------------------------------------------------------------------


def test_summarize_case_merges_documents(tmp_path: Path) -> None:
    documents: list[tuple[str, str, dict[str, Any]]] = []
    for doc_id, text in (("doc_a", LEASE_PAGE_1 + " " + LEASE_PAGE_2), ("doc_b", _long_document())):
        path = tmp_path / f"{doc_id}.txt"
        path.write_text(text, encoding="utf-8")
        documents.append((doc_id, doc_id, process_document(path, "text/plain").ai))
    case = summarize_case("Harbor Homes v. Porter", documents)
    assert case["document_count"] == 2
    texts = {"doc_a": LEASE_PAGE_1 + " " + LEASE_PAGE_2, "doc_b": _long_document()}
    for sentence in case["summary"]["sentences"]:
        assert texts[sentence["document_id"]][sentence["start"] : sentence["end"]] == sentence["text"]
    assert {s["document_id"] for s in case["summary"]["sentences"]} == {"doc_a", "doc_b"}
    dates = [d["date"] for d in case["key_dates"]]
    assert dates == sorted(dates) and "2024-03-03" in dates
    rent = [m for m in case["entities"]["money"] if m["value"]["amount"] == "2400.00"]
    assert rent and rent[0]["documents"] == ["doc_a"]
    assert [d["document_id"] for d in case["provenance"]["documents"]] == ["doc_a", "doc_b"]
    assert summarize_case("Empty", [])["summary"] == {"text": "", "sentences": []}


ODT_CONTENT = (
    '<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:text>'
    "<text:p>The lease ends in May.</text:p></office:text></office:body></office:document-content>"
)
XLSX_SHEET = (
    '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
    '<row r="1"><c r="A1" t="inlineStr"><is><t>The lease ends in May.</t></is></c></row>'
    "</sheetData></worksheet>"
)
ODT = "application/vnd.oasis.opendocument.text"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
ZIP_BASED = {
    DOCX: (lambda: make_docx(["The lease ends in May."]), "word/document.xml"),
    ODT: (lambda: office_archive({"content.xml": ODT_CONTENT}), "content.xml"),
    XLSX: (lambda: office_archive({"xl/worksheets/sheet1.xml": XLSX_SHEET}), "xl/worksheets/sheet1.xml"),
}


@pytest.mark.parametrize("file_type", sorted(ZIP_BASED))
def test_zip_bombs_fail_before_they_inflate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, file_type: str
) -> None:
    # Smaller bounds than the real ones, so that the test inflates little (the API test in
    # tests/ai/test_pipeline.py sends a DOCX past the real bound).
    monkeypatch.setattr(office, "MAX_UNZIPPED_MEMBER_BYTES", 2_000_000)
    monkeypatch.setattr(office, "MAX_UNZIPPED_TOTAL_BYTES", 3_500_000)
    make, member = ZIP_BASED[file_type]
    within = tmp_path / "within"
    within.write_bytes(inflated(make(), member, 1_900_000, filler=600_000))
    pages, _ = extract(within, file_type)
    assert "The lease ends in May." in pages[0].text
    for name, archive in {
        "member": inflated(make(), member, 2_100_000),
        "total": inflated(make(), member, 1_900_000, filler=1_900_000),
    }.items():
        path = tmp_path / name
        path.write_bytes(archive)
        assert path.stat().st_size < 100_000  # a small file ...
        with pytest.raises(ProcessingFailed, match="unpacks to more than"):  # ... refused unread
            process_document(path, file_type)
