"""A document's versions on its page: the history newest first, each version downloadable as it
was, a new version uploaded from the page (the API's rules: a legal hold refuses it)."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.support.factories import upload
from tests.web.conftest import USER_PASSWORD, Web, serious_violations

FIRST = b"Engagement letter, first draft: fees at $300 an hour.\n"
SECOND = b"Engagement letter, signed: fees at $275 an hour.\n"


def test_a_new_version_from_the_page_and_every_version_downloadable(web: Web) -> None:
    _, email = web.user("attorney")
    with web.api.admin() as admin:
        case_id = admin.post("/cases", json={"title": "Versions v. History"}).json()["data"]["id"]
        document = upload(admin, case_id, FIRST, name="engagement.txt").json()["data"]
    page = web.page()
    web.sign_in(page, email, USER_PASSWORD)
    page.goto(f"/app/documents/{document['id']}")
    rows = page.locator("#versions tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("current")

    page.get_by_label("New version").set_input_files(
        files=[{"name": "engagement-signed.txt", "mimeType": "text/plain", "buffer": SECOND}]
    )
    page.get_by_role("button", name="Upload new version").click()
    expect(page.get_by_role("status")).to_have_text("Saved.")
    expect(page.locator("dt:has-text('Version') + dd")).to_have_text("2")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text("engagement-signed.txt")
    expect(rows.nth(0)).to_contain_text("current")
    expect(rows.nth(1)).to_contain_text("engagement.txt")
    assert serious_violations(page) == []
    web.screenshot(page, "document-versions")

    # Each version's bytes as they were; the document's own content is the current one.
    first = page.request.get(f"/app/documents/{document['id']}/versions/1/download")
    assert first.status == 200 and first.body() == FIRST
    assert page.request.get(f"/app/documents/{document['id']}/download").body() == SECOND
    with web.api.admin() as admin:
        listed = admin.get(f"/documents/{document['id']}/versions").json()["data"]
        assert [(v["version"], v["file_name"]) for v in listed] == [
            (1, "engagement.txt"),
            (2, "engagement-signed.txt"),
        ]
        # A legal hold freezes the versions, on the page as through the API.
        held = admin.post(f"/cases/{case_id}/holds", json={"reason": "litigation expected"})
        assert held.status_code == 201, held.text
    page.get_by_label("New version").set_input_files(
        files=[{"name": "late.txt", "mimeType": "text/plain", "buffer": b"Too late.\n"}]
    )
    page.get_by_role("button", name="Upload new version").click()
    expect(page.get_by_role("alert")).to_contain_text("hold")
    page.goto(f"/app/documents/{document['id']}")
    expect(rows).to_have_count(2)
