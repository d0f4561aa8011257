"""The AI pipeline through the API (contract §8): upload → background job → `ai` on the document,
events to a subscribed webhook; re-processing, case summaries, failures, the switch in
/admin/config, and a worker killed mid-job. Real model, real files, both databases."""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import shutil
import signal
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.assertions import api_error, ok
from tests.support.factories import inflated, make_docx, make_pdf, new_case
from tests.support.processes import Process
from tests.support.receivers import Receiver
from tests.support.servers import ADMIN_EMAIL, ADMIN_PASSWORD, Api, make_settings, run_sql
from tests.support.waiting import wait_until

FINAL = ("completed", "failed", "skipped")
# Takes seconds to process: long enough to catch a job in flight.
LONG_TEXT = ("The tenant withheld rent because the landlord failed to repair the heating. " * 1500).encode()

LEASE_PAGES = [
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
        "Possession of the premises must then be surrendered, as held in Smith v. Jones,",
        "123 F.3d 456 (9th Cir. 1999).",
    ],
]

MOTION = [
    "UNITED STATES DISTRICT COURT FOR THE NORTHERN DISTRICT OF CALIFORNIA",
    "Acme Robotics Inc. v. Beta Dynamics Corp., Case No. 3:24-cv-01234",
    "DEFENDANT'S MOTION FOR SUMMARY JUDGMENT",
    "Defendant Beta Dynamics Corp. respectfully moves for summary judgment on all claims.",
    "There is no genuine dispute as to any material fact, as required by Celotex Corp. v. Catrett,"
    " 477 U.S. 317 (1986).",
    "The hearing is set for June 12, 2024 before Judge Maria Alvarez.",
]


@pytest.fixture
def ai_server(make_server) -> Api:
    return make_server(ai_enabled=True)


def wait_processed(client: httpx.Client, document_id: str, timeout: float = 120) -> dict[str, Any]:
    def final() -> dict[str, Any] | None:
        document = ok(client.get(f"/documents/{document_id}"))
        return document if document["processing_status"] in FINAL else None

    return dict(wait_until(final, timeout=timeout, interval=0.2))


def upload(client: httpx.Client, case_id: str, content: bytes, name: str, **form: str) -> dict[str, Any]:
    r = client.post(f"/cases/{case_id}/documents", data=form, files={"file": (name, content)})
    return dict(ok(r, 201))


def words(text: str) -> str:
    return " ".join(text.split())


def subscribe(client: httpx.Client, url: str) -> None:
    hook = {"name": "ai", "url": url, "events": ["ai.*", "document.processed"], "secret": "s" * 24}
    ok(client.post("/admin/webhooks", json=hook), 201)


def test_an_uploaded_pdf_is_processed_with_cited_results_and_events(
    ai_server: Api, receiver: Receiver
) -> None:
    with ai_server.admin() as admin:
        subscribe(admin, receiver.url)
        case_id = new_case(admin)["id"]
        uploaded = upload(
            admin, case_id, make_pdf(LEASE_PAGES), "lease.pdf", title="Lease and default notice"
        )
        assert uploaded["processing_status"] == "pending" and uploaded["ai"] is None
        document = wait_processed(admin, uploaded["id"])

    assert document["processing_status"] == "completed", document
    ai = document["ai"]
    assert ai["page_count"] == 2 and ai["language"] == "en"
    expected_words = sum(len(line.split()) for page in LEASE_PAGES for line in page)
    assert abs(ai["word_count"] - expected_words) <= 3
    # The summary is extractive: every sentence is in the document, on the page it cites.
    assert 1 <= len(ai["summary"]["sentences"]) <= 5
    for sentence in ai["summary"]["sentences"]:
        assert words(sentence["text"]) in words(" ".join(LEASE_PAGES[sentence["page"] - 1])), sentence
        assert 0 <= sentence["start"] < sentence["end"]
    entities = ai["entities"]
    assert any("Harbor View Properties LLC" in e["text"] for e in entities["organizations"])
    assert any("Daniel Okafor" in e["text"] for e in entities["people"])
    assert {"2024-03-03", "2024-04-01", "2024-05-01"} <= {e["value"] for e in entities["dates"]}
    assert {"amount": "2450.00", "currency": "USD"} in [e["value"] for e in entities["money"]]
    assert any("123 F.3d 456" in e["text"] for e in entities["citations"])
    assert isinstance(ai["suggested_type"]["label"], str) and 0 <= ai["suggested_type"]["confidence"] <= 1
    assert ai["keywords"] and all(isinstance(k, str) for k in ai["keywords"])
    provenance = ai["provenance"]
    assert re.fullmatch(r"[0-9a-f]{64}", provenance["text_sha256"])
    assert provenance["embedding_model"] and provenance["pipeline_version"]

    # Three events, delivered and signed like any other.
    names = [r.json()["event"] for r in receiver.wait_for(count=3)]
    assert sorted(names) == ["ai.processing_completed", "ai.processing_started", "document.processed"]
    [started] = ai_server.events("ai.processing_started", document_id=document["id"])
    [completed] = ai_server.events("ai.processing_completed", document_id=document["id"])
    [processed] = ai_server.events("document.processed", document_id=document["id"])
    assert started["case_id"] == case_id and started["attempt"] == 1
    assert completed["status"] == "completed" and completed["job_id"] == started["job_id"]
    assert processed["processing_status"] == "completed" and processed["page_count"] == 2
    passages = ai_server.sql("SELECT page, text FROM passages WHERE document_id = :d", d=document["id"])
    assert {page for page, _ in passages} == {1, 2}

    # Findable by what it means, with words it does not contain.
    query = "unpaid housing obligations"
    text = " ".join(line for page in LEASE_PAGES for line in page).lower()
    assert not any(word in text for word in query.split())
    with ai_server.admin() as admin:
        hits = ok(admin.get("/search", params={"q": query, "kind": "document"}))
    [hit] = [h for h in hits if h["id"] == document["id"]]
    assert hit["matched"] == ["semantic"] and hit["snippet"]["page"] in (1, 2)


def test_docx_and_text_are_processed_too(ai_server: Api) -> None:
    with ai_server.admin() as admin:
        case_id = new_case(admin)["id"]
        motion = upload(admin, case_id, make_docx(MOTION), "motion.docx")
        letter_text = (
            b"Dear Ms. Chen,\n\nOn behalf of Northwind Traders Ltd., we demand payment of EUR 18,000.00 "
            b"for the goods delivered on 2 February 2024. Please pay within 30 days.\n\nYours sincerely,\n"
            b"Peter Grant, Grant & Howell LLP\n"
        )
        letter = upload(admin, case_id, letter_text, "letter.txt")
        motion_doc, letter_doc = wait_processed(admin, motion["id"]), wait_processed(admin, letter["id"])
    assert motion_doc["processing_status"] == "completed" and letter_doc["processing_status"] == "completed"
    assert any("477 U.S. 317" in c["text"] for c in motion_doc["ai"]["entities"]["citations"])
    assert any("Beta Dynamics Corp" in o["text"] for o in motion_doc["ai"]["entities"]["organizations"])
    assert {"amount": "18000.00", "currency": "EUR"} in [
        m["value"] for m in letter_doc["ai"]["entities"]["money"]
    ]
    assert "2024-02-02" in {d["value"] for d in letter_doc["ai"]["entities"]["dates"]}


def test_an_image_without_ocr_is_skipped_and_a_damaged_pdf_fails(ai_server: Api) -> None:
    png = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + b"\x00" * 64
    broken_pdf = b"%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n" + b"\x13\x37" * 200
    with ai_server.admin() as admin:
        case_id = new_case(admin)["id"]
        scan = upload(admin, case_id, png, "scan.png")
        broken = upload(admin, case_id, broken_pdf, "broken.pdf")
        scan_doc, broken_doc = wait_processed(admin, scan["id"]), wait_processed(admin, broken["id"])
    if shutil.which("tesseract") is None:
        assert scan_doc["processing_status"] == "skipped"
        assert scan_doc["ai"]["skipped_reason"]
        [completed] = ai_server.events("ai.processing_completed", document_id=scan["id"])
        assert completed["status"] == "skipped"
    assert broken_doc["processing_status"] == "failed"
    [failed] = ai_server.events("ai.processing_failed", document_id=broken["id"])
    # A damaged file is not retried: it would fail the same way.
    assert failed["reason"] and failed["will_retry"] is False and "Traceback" not in failed["reason"]
    assert not ai_server.events("document.processed", document_id=broken["id"])


def test_a_zip_bomb_fails_without_being_inflated(ai_server: Api) -> None:
    # A 0.1 MB DOCX whose text part unpacks to 70 MB: refused as it is, not parsed, not retried.
    bomb = inflated(make_docx(["Settlement offer."]), "word/document.xml", 70_000_000)
    assert len(bomb) < 1_000_000
    with ai_server.admin() as admin:
        document = upload(admin, new_case(admin)["id"], bomb, "offer.docx")
        processed = wait_processed(admin, document["id"])
    assert processed["processing_status"] == "failed"
    [failed] = ai_server.events("ai.processing_failed", document_id=document["id"])
    assert "unpacks to more than" in failed["reason"] and failed["will_retry"] is False


def test_reprocessing_replaces_results_and_a_case_summary_cites_its_documents(ai_server: Api) -> None:
    with ai_server.admin() as admin:
        case_id = new_case(admin)["id"]
        api_error(admin.post(f"/cases/{case_id}/summarize"), 409, "CONFLICT")  # nothing processed yet
        first = upload(admin, case_id, make_pdf(LEASE_PAGES), "lease.pdf")
        second = upload(admin, case_id, make_docx(MOTION), "motion.docx")
        wait_processed(admin, first["id"])
        wait_processed(admin, second["id"])
        before = ai_server.sql("SELECT count(*) FROM passages WHERE document_id = :d", d=first["id"])

        job = ok(admin.post(f"/documents/{first['id']}/process"), 202)
        assert job["document_id"] == first["id"] and job["kind"] == "document"
        wait_until(
            lambda: len(ai_server.events("document.processed", document_id=first["id"])) == 2, timeout=120
        )
        after = ai_server.sql("SELECT count(*) FROM passages WHERE document_id = :d", d=first["id"])
        assert after == before  # replaced, not added to

        job = ok(admin.post(f"/cases/{case_id}/summarize"), 202)
        assert job["kind"] == "case" and job["document_id"] is None
        case = wait_until(lambda: (c := ok(admin.get(f"/cases/{case_id}")))["ai"] and c, timeout=120)
    summary = case["ai"]["summary"]
    assert summary["sentences"]
    assert {s["document_id"] for s in summary["sentences"]} <= {first["id"], second["id"]}
    sources = {first["id"]: LEASE_PAGES, second["id"]: [MOTION]}
    for sentence in summary["sentences"]:
        page_text = " ".join(sources[sentence["document_id"]][sentence["page"] - 1])
        assert words(sentence["text"]) in words(page_text)
    [completed] = ai_server.events("ai.processing_completed", job_id=job["job_id"])
    assert completed["case_id"] == case_id and completed["kind"] == "case"


def test_turning_ai_off_skips_new_uploads_and_refuses_reprocessing(ai_server: Api) -> None:
    with ai_server.admin() as admin:
        ok(admin.patch("/admin/config", json={"ai": {"enabled": False}}))
        case_id = new_case(admin)["id"]
        document = upload(admin, case_id, b"A short note about the hearing.", "note.txt")
        assert document["processing_status"] == "skipped"
        api_error(admin.post(f"/documents/{document['id']}/process"), 409, "CONFLICT")
        ok(admin.patch("/admin/config", json={"ai": {"enabled": True}}))
        ok(admin.post(f"/documents/{document['id']}/process"), 202)
        assert wait_processed(admin, document["id"])["processing_status"] == "completed"


def test_a_case_summary_says_when_a_document_it_quotes_is_gone(ai_server: Api) -> None:
    real = Path(__file__).parent / "real" / "docs"
    with ai_server.admin() as admin:
        case_id = new_case(admin)["id"]
        kept = upload(admin, case_id, (real / "j01.txt").read_bytes(), "decision.txt")
        deleted = upload(admin, case_id, (real / "c01.txt").read_bytes(), "contract.txt")
        for document in (kept, deleted):
            wait_processed(admin, document["id"])

        def summary() -> dict[str, Any]:
            return dict(ok(admin.get(f"/cases/{case_id}"))["ai"] or {})

        def summarized() -> dict[str, Any]:
            done = len(ai_server.events("ai.processing_completed", case_id=case_id, kind="case"))
            ok(admin.post(f"/cases/{case_id}/summarize"), 202)
            wait_until(
                lambda: len(ai_server.events("ai.processing_completed", case_id=case_id, kind="case")) > done,
                timeout=120,
            )
            return summary()

        assert "stale" not in summarized()
        # The same text through the same pipeline again: the summary still matches it.
        ok(admin.post(f"/documents/{kept['id']}/process"), 202)
        processed = ai_server.events
        wait_until(lambda: len(processed("document.processed", document_id=kept["id"])) == 2, timeout=120)
        assert "stale" not in summary()

        ok(admin.delete(f"/documents/{deleted['id']}"))
        stale = summary()
        assert stale["stale"] is True and stale["stale_reason"] == "document_deleted"
        assert "stale" not in summarized()  # made again, from the documents left


def test_documents_skipped_while_ai_was_off_are_reprocessed_in_batches(ai_server: Api) -> None:
    decision = (Path(__file__).parent / "real" / "docs" / "j01.txt").read_bytes()
    with ai_server.admin() as admin:
        ok(admin.patch("/admin/config", json={"ai": {"enabled": False}}))
        case_id = new_case(admin)["id"]
        skipped = [upload(admin, case_id, decision, f"decision-{n}.txt")["id"] for n in range(3)]
        trashed_case = new_case(admin)["id"]
        upload(admin, trashed_case, decision, "in-the-trash.txt")
        ok(admin.delete(f"/cases/{trashed_case}"))
        # Refused while AI is off, and for a status that is not final.
        api_error(admin.post("/admin/ai/reprocess", params={"status": "skipped"}), 409, "CONFLICT")
        ok(admin.patch("/admin/config", json={"ai": {"enabled": True}}))
        api_error(admin.post("/admin/ai/reprocess", params={"status": "completed"}), 422, "VALIDATION_ERROR")

        first = ok(admin.post("/admin/ai/reprocess", params={"status": "skipped", "limit": 2}), 202)
        assert first == {"queued": 2, "remaining": 1}
        # The case in the trash is left alone: nothing remains once the live case's three are queued.
        assert ok(admin.post("/admin/ai/reprocess", params={"status": "skipped"}), 202) == {
            "queued": 1,
            "remaining": 0,
        }
        for document_id in skipped:
            assert wait_processed(admin, document_id)["processing_status"] == "completed"
    _, token = ai_server.make_user("attorney")
    with ai_server.client(token=token) as attorney:
        assert attorney.post("/admin/ai/reprocess", params={"status": "skipped"}).status_code == 403


def test_permissions_for_ai_requests(ai_server: Api) -> None:
    _, viewer_token = ai_server.make_user("viewer")
    with ai_server.admin() as admin:
        case_id = new_case(admin)["id"]
        document = upload(admin, case_id, b"Notes of the client meeting on fees.", "notes.txt")
    with ai_server.client(token=viewer_token) as viewer:
        assert viewer.post(f"/documents/{document['id']}/process").status_code == 403
        assert viewer.post(f"/cases/{case_id}/summarize").status_code == 403
    with ai_server.admin() as admin:
        api_error(admin.post("/documents/doc_missing/process"), 404, "NOT_FOUND")
        api_error(admin.post("/cases/case_missing/summarize"), 404, "NOT_FOUND")


def test_an_overrunning_job_is_stopped_retried_and_the_pool_replaced(make_server) -> None:
    # Model loading happens before a job's clock starts, so 1.5 s is all processing time.
    server = make_server(ai_enabled=True, ai_job_timeout_seconds=1.5)
    with server.admin() as admin:
        case_id = new_case(admin)["id"]
        slow = upload(admin, case_id, LONG_TEXT * 2, "statement.txt")
        [failed] = wait_until(
            lambda: server.events("ai.processing_failed", document_id=slow["id"]), timeout=60
        )
        assert failed["will_retry"] is True and "time limit" in failed["reason"]
        assert ok(admin.get(f"/documents/{slow['id']}"))["processing_status"] == "pending"
        # The overrunning process was ended; a new pool serves the next document (queued before
        # the slow one's retry, so it runs first).
        quick = upload(
            admin, case_id, b"The hearing is moved to Friday at the request of counsel.", "note.txt"
        )
        assert wait_processed(admin, quick["id"], timeout=60)["processing_status"] == "completed"


def test_a_dead_ai_process_is_replaced(make_server) -> None:
    server = make_server(ai_enabled=True)
    with server.admin() as admin:
        case_id = new_case(admin)["id"]
        first = upload(admin, case_id, b"The parties met on Monday to discuss the settlement.", "a.txt")
        assert wait_processed(admin, first["id"])["processing_status"] == "completed"
        # The server runs in this test's process, so its AI process is a child of ours.
        children = [p for p in multiprocessing.active_children() if p.pid is not None]
        assert children
        for child in children:
            os.kill(child.pid, signal.SIGKILL)  # e.g. the kernel's out-of-memory killer
            child.join(timeout=10)
        second = upload(admin, case_id, b"Counsel agreed to extend the deadline by a week.", "b.txt")
        done = wait_processed(admin, second["id"], timeout=90)
    assert done["processing_status"] == "completed", server.events("ai.processing_failed")


def start_a_long_job(server: Process, content: bytes = LONG_TEXT) -> tuple[str, str]:
    """Upload a document that takes seconds to process to `server`; return once it is being
    processed, with an administrator's token and the document's id."""
    with httpx.Client(base_url=server.base, timeout=30) as c:
        token = ok(c.post("/auth/login", json={"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD}))["token"]
        c.headers["Authorization"] = f"Bearer {token}"
        document = upload(c, new_case(c)["id"], content, "statement.txt")
        wait_until(
            lambda: ok(c.get(f"/documents/{document['id']}"))["processing_status"] == "processing",
            timeout=60,
            interval=0.05,
        )
    return token, str(document["id"])


def test_a_worker_killed_mid_job_loses_nothing(database, tmp_path: Path) -> None:
    data_dir, url = database
    # A lease of 20 s + 1 s: long enough for the job, short enough for the test to see the take-over.
    settings = make_settings(
        data_dir,
        url,
        ai_enabled=True,
        ai_job_timeout_seconds=20,
        worker_lease_margin_seconds=1,
        worker_poll_seconds=0.2,
    )
    first = Process("serve", settings, tmp_path / "first.log")
    try:
        # A third of the long text: still in flight when the kill comes, and far inside the 20 s
        # limit when the second server runs it again (on a machine busy with other tests too).
        token, document_id = start_a_long_job(first, LONG_TEXT[: len(LONG_TEXT) // 3])
        first.kill()  # mid-job: the lease is held, the work is lost
    finally:
        first.stop()
    second = Process("serve", settings, tmp_path / "second.log")
    try:
        with httpx.Client(
            base_url=second.base, headers={"Authorization": f"Bearer {token}"}, timeout=30
        ) as c:
            done = wait_processed(c, document_id, timeout=150)
    finally:
        second.stop()
    assert done["processing_status"] == "completed"
    started = run_sql(settings, "SELECT data FROM events WHERE name = 'ai.processing_started'")
    attempts = sorted((r[0] if isinstance(r[0], dict) else json.loads(r[0]))["attempt"] for r in started)
    assert attempts == [1, 2]


def _children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (from /proc: Linux)."""
    found = []
    for stat_file in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat_file.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        if int(fields[1]) == pid:
            found.append(int(stat_file.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")  # a zombie has ended; only its exit status is left to collect


def test_ai_processes_end_with_a_killed_server(database, tmp_path: Path) -> None:
    data_dir, url = database
    settings = make_settings(data_dir, url, ai_enabled=True, worker_poll_seconds=0.2)
    server = Process("serve", settings, tmp_path / "serve.log")
    try:
        start_a_long_job(server, LONG_TEXT * 20)  # busy for far longer than children may outlive it
        # The job is claimed before its process is started: wait for the process.
        children = wait_until(lambda: _children(server.proc.pid), timeout=60, interval=0.1)
        server.kill()  # SIGKILL: no chance to end its children itself
    finally:
        server.stop()
    try:
        wait_until(lambda: not any(_alive(pid) for pid in children), timeout=10, interval=0.1)
    finally:
        for pid in filter(_alive, children):  # never leave an orphan behind a failed test
            os.kill(pid, signal.SIGKILL)


def test_a_stopping_server_hands_its_jobs_back(database, tmp_path: Path) -> None:
    data_dir, url = database
    # The default 600 s time limit: were the job left to its lease, the test would time out.
    settings = make_settings(data_dir, url, ai_enabled=True, worker_poll_seconds=0.2)
    first = Process("serve", settings, tmp_path / "first.log")
    try:
        token, document_id = start_a_long_job(first)
    finally:
        first.stop()  # SIGTERM: a graceful stop, mid-job
    [(status, attempts, lease)] = run_sql(
        settings,
        "SELECT status, attempts_made, lease_expires_at FROM ai_jobs WHERE document_id = :d",
        d=document_id,
    )
    assert (status, attempts, lease) == ("pending", 0, None)
    second = Process("serve", settings, tmp_path / "second.log")
    try:
        with httpx.Client(
            base_url=second.base, headers={"Authorization": f"Bearer {token}"}, timeout=30
        ) as c:
            assert wait_processed(c, document_id, timeout=90)["processing_status"] == "completed"
    finally:
        second.stop()
