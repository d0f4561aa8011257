"""Following AI jobs (contract §14): `GET /jobs/{id}` and a case's jobs, under the case's access."""

from __future__ import annotations

from typing import Any

import pytest

from tests.ai.test_pipeline import LEASE_PAGES, upload, wait_processed
from tests.support.assertions import api_error, ok
from tests.support.factories import make_pdf, new_case
from tests.support.servers import Api
from tests.support.waiting import wait_until


@pytest.fixture
def ai_server(make_server: Any) -> Api:
    return make_server(ai_enabled=True)


def test_a_job_is_followed_to_its_end_and_listed_with_its_case(ai_server: Api) -> None:
    _, outsider_token = ai_server.make_user("attorney")
    with ai_server.admin() as admin, ai_server.client(token=outsider_token) as outsider:
        case = new_case(admin)
        document = upload(admin, case["id"], make_pdf(LEASE_PAGES), "lease.pdf")
        wait_processed(admin, document["id"])
        queued = ok(admin.post(f"/documents/{document['id']}/process"), 202)

        job = wait_until(
            lambda: (j := ok(admin.get(f"/jobs/{queued['job_id']}")))["status"] == "succeeded" and j,
            timeout=120,
        )
        assert job["id"] == queued["job_id"] and job["kind"] == "document"
        assert (job["case_id"], job["document_id"], job["attempts"], job["error"]) == (
            case["id"],
            document["id"],
            1,
            None,
        )
        assert job["created_at"] <= job["started_at"] <= job["finished_at"]

        listed = ok(admin.get(f"/cases/{case['id']}/jobs"))
        assert listed[0]["id"] == queued["job_id"]  # newest first: the re-processing
        assert len(listed) == 2 and {j["document_id"] for j in listed} == {document["id"]}
        assert ok(admin.get(f"/cases/{case['id']}/jobs", params={"status": "failed"})) == []
        api_error(admin.get(f"/cases/{case['id']}/jobs", params={"status": "lost"}), 422, "VALIDATION_ERROR")
        api_error(admin.get("/jobs/job_nope"), 404, "NOT_FOUND")

        # A job of a matter hidden from the caller is as absent as one that never existed.
        ok(admin.put(f"/cases/{case['id']}/access", json={"access": "restricted"}))
        assert (
            api_error(outsider.get(f"/jobs/{queued['job_id']}"), 404, "NOT_FOUND")["message"]
            == "Job not found"
        )
        api_error(outsider.get(f"/cases/{case['id']}/jobs"), 404, "NOT_FOUND")
