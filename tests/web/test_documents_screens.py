"""Documents and "Ask" in a real browser, on a server that processes documents (the AI worker
runs, with the real models): upload several files at once with their progress, by the file field
and by drag and drop; see the processing state turn to completed without reloading; open a PDF
with its inline preview, summary and entities; tag it; ask the matter a question and follow the
answer's citation to the cited passage."""

from __future__ import annotations

import re
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests.support.factories import make_pdf
from tests.support.servers import Api
from tests.support.waiting import wait_until
from tests.web.conftest import USER_PASSWORD, Web, serious_violations, server_with

LEASE = [
    [
        "RESIDENTIAL LEASE AGREEMENT",
        "This Lease Agreement is made on March 3, 2024 between Harbor View Properties LLC,",
        "the Landlord, and Mr. Daniel Okafor, the Tenant, for the apartment at 14 Elm Street.",
        "The Tenant shall pay a monthly rent of $2,450.00 on the first day of each month.",
        "A security deposit of $4,900.00 is held by the Landlord for the term of the lease.",
    ],
    [
        "NOTICE OF DEFAULT",
        "The lessee defaulted on the rent payments due on April 1, 2024 and May 1, 2024.",
        "The Landlord may terminate the lease after fourteen days of written notice.",
    ],
]


def _png(width: int = 2, height: int = 2) -> bytes:
    """A small valid PNG (grey pixels)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    pixels = zlib.compress(b"".join(b"\x00" + b"\x80" * width for _ in range(height)))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


PNG = _png()


@pytest.fixture(scope="module")
def ai_api(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    with server_with(backend, tmp_path_factory.mktemp(f"web-ai-{backend}"), ai_enabled=True) as server:
        yield server


@pytest.fixture
def ai_web(ai_api: Api, browser: Browser, backend: str) -> Iterator[Web]:
    site = Web(ai_api, browser, backend)
    yield site
    site.close()


def test_upload_several_files_preview_summary_tags_and_ask_with_citations(
    ai_web: Web, tmp_path: Path
) -> None:
    web = ai_web
    user, email = web.user("attorney")
    with web.api.admin() as admin:
        case = admin.post("/cases", json={"title": "Okafor: lease default"})
        assert case.status_code == 201, case.text
        case_id = case.json()["data"]["id"]
    page = web.page()
    web.sign_in(page, email, USER_PASSWORD)
    page.goto(f"/app/matters/{case_id}/documents")
    expect(page.get_by_text("No documents on this matter yet.")).to_be_visible()

    # Two files at once through the field: each gets its progress bar, then the list shows both.
    page.get_by_label("Files").set_input_files(
        files=[
            {"name": "lease.pdf", "mimeType": "application/pdf", "buffer": make_pdf(LEASE)},
            {"name": "photo.png", "mimeType": "image/png", "buffer": PNG},
        ]
    )
    page.get_by_role("button", name="Upload", exact=True).click()
    expect(page).to_have_url(re.compile(r"/documents\?uploaded=2$"), timeout=30_000)
    rows = page.locator("#documents tbody tr")
    expect(rows).to_have_count(2)
    # Processed in the background: the list refreshes itself until both are done.
    expect(page.locator("#documents tr", has_text="lease.pdf").locator(".processing")).to_have_text(
        "Completed", timeout=120_000
    )

    # A third by drag and drop, with a failing fourth (an unsupported type): each says how it went.
    page.evaluate(
        """() => {
            const transfer = new DataTransfer();
            const notes = "Notes of the call with the landlord.";
            transfer.items.add(new File([notes], "call-notes.txt", {type: "text/plain"}));
            transfer.items.add(new File([new Uint8Array([0, 159, 146, 150, 0, 1, 2, 3])], "blob.bin"));
            const drop = new DragEvent("drop", {dataTransfer: transfer, bubbles: true, cancelable: true});
            document.querySelector("form[data-upload]").dispatchEvent(drop);
        }"""
    )
    uploads = page.locator("#upload-progress li")
    expect(uploads.filter(has_text="call-notes.txt")).to_contain_text("Uploaded")
    expect(uploads.filter(has_text="blob.bin")).to_contain_text("Failed:")
    expect(uploads.filter(has_text="call-notes.txt").locator("progress")).to_have_attribute("value", "100")
    page.reload()
    expect(rows).to_have_count(3)
    web.screenshot(page, "matter-documents-uploads")

    # The PDF: its preview (the content, inline, framed by our page only), summary and entities.
    page.get_by_role("link", name="lease.pdf", exact=True).click()
    expect(page.get_by_role("heading", name="lease.pdf", level=2)).to_be_visible()
    expect(page.locator("#summary")).to_contain_text("(page 1)")
    expect(page.locator("#entities")).to_contain_text("Harbor View Properties LLC")
    expect(page.locator("#entities")).to_contain_text("Daniel Okafor")
    frame = page.locator("iframe.preview")
    expect(frame).to_have_attribute("title", "Preview of lease.pdf")
    preview = page.request.get(frame.get_attribute("src") or "")
    assert preview.status == 200 and preview.headers["content-type"] == "application/pdf"
    assert preview.headers["content-disposition"].startswith("inline;")
    assert "frame-ancestors 'self'" in preview.headers["content-security-policy"]
    assert preview.body() == make_pdf(LEASE)
    assert not serious_violations(page)
    page.get_by_label("Tags").fill("lease, default notice")
    page.get_by_role("button", name="Save tags").click()
    expect(page.locator("ul.tags li")).to_have_text(["lease", "default notice"])
    web.screenshot(page, "document")

    # The image is shown in an <img>; a text file has no preview (HTML never runs as our page).
    page.goto(f"/app/matters/{case_id}/documents")
    page.get_by_role("link", name="photo.png", exact=True).click()
    image = page.get_by_role("img", name="Preview of photo.png")
    expect(image).to_be_visible()
    # (Polled from here: wait_for_function's string would be an `eval`, which the page's CSP refuses.)
    wait_until(lambda: page.evaluate("document.querySelector('img.preview').complete"))
    assert page.evaluate("document.querySelector('img.preview').naturalWidth") == 2
    page.goto(f"/app/matters/{case_id}/documents")
    page.get_by_role("link", name="call-notes.txt", exact=True).click()
    expect(page.get_by_text("No preview for this type of file")).to_be_visible()
    text_id = page.url.rsplit("/", 1)[1]
    assert page.request.get(f"/app/documents/{text_id}/preview").status == 404

    # The API sees the same tags.
    with web.api.admin() as admin:
        documents = admin.get(f"/cases/{case_id}/documents").json()["data"]
    lease = next(d for d in documents if d["file_name"] == "lease.pdf")
    assert lease["tags"] == ["lease", "default notice"]

    # Ask: the answer quotes the lease, and its citation opens the document at that passage.
    page.goto(f"/app/matters/{case_id}")
    page.get_by_role("navigation", name="Matter sections").get_by_role("link", name="Ask", exact=True).click()
    page.get_by_label("Question").fill("How much is the security deposit?")
    page.get_by_role("button", name="Ask", exact=True).click()
    answer = page.locator("#answer")
    expect(answer).to_contain_text("$4,900.00")
    web.screenshot(page, "matter-ask")
    assert not serious_violations(page)
    answer.locator("a.citation").first.click()
    expect(page).to_have_url(re.compile(rf"/app/documents/{lease['id']}\?page=1&start=\d+&end=\d+#cited$"))
    expect(page.locator("#cited mark")).to_contain_text("$4,900.00")
    expect(page.get_by_role("heading", name="Cited passage, page 1")).to_be_visible()

    # A question nothing supports: no answer, said plainly; a too-short one is refused on the form.
    page.goto(f"/app/matters/{case_id}/ask")
    page.get_by_label("Question").fill("Who won the 1998 football world cup final?")
    page.get_by_role("button", name="Ask", exact=True).click()
    expect(page.locator("#answer")).to_contain_text("No passage in this case's documents supports an answer")
    with web.api.admin() as admin:
        asked = admin.get("/admin/audit", params={"action": "case.ask", "case_id": case_id}).json()["data"]
    assert len(asked) == 2 and {a["actor_id"] for a in asked} == {user["id"]}


def test_ask_without_processed_documents_and_with_a_short_question(web: Web) -> None:
    """On the plain web server (AI off) asking still works on a matter with no processed
    documents, and says so; a question under 3 characters is the API's 422, shown on the form."""
    _, email = web.user("attorney")
    with web.api.admin() as admin:
        case_id = admin.post("/cases", json={"title": "Quiet matter"}).json()["data"]["id"]
    page = web.page()
    web.sign_in(page, email, USER_PASSWORD)
    page.goto(f"/app/matters/{case_id}/ask")
    page.get_by_label("Question").fill("What?")
    page.get_by_role("button", name="Ask", exact=True).click()
    expect(page.locator("#answer")).to_have_text("This case has no processed documents to answer from.")
    response = page.request.post(
        f"/app/matters/{case_id}/ask",
        form={"question": "ab", "csrf_token": page.locator("input[name=csrf_token]").first.input_value()},
    )
    assert response.status == 422 and "at least 3 characters" in response.text()
