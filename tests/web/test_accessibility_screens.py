"""axe-core on every page of the second round (documents, Ask, conflict check, trash,
administration), in their empty, filled and error states, at desktop width and, on one database,
at phone width: no serious or critical violation. And the documents tab still uploads with
JavaScript off (the plain file field)."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.support.servers import ADMIN_EMAIL, ADMIN_PASSWORD, free_port
from tests.web.conftest import USER_PASSWORD, Web, serious_violations


def _fill(web: Web) -> dict[str, str]:
    with web.api.admin() as admin:
        case = admin.post("/cases", json={"title": "Axe matter", "client_name": "Axe Client Ltd"}).json()[
            "data"
        ]
        document = admin.post(
            f"/cases/{case['id']}/documents", files={"file": ("axe.txt", b"Axe text.", "text/plain")}
        ).json()["data"]
        binned = admin.post("/cases", json={"title": "Axe binned matter"}).json()["data"]
        admin.delete(f"/cases/{binned['id']}")
        group = admin.post("/admin/groups", json={"name": "Axe group"}).json()["data"]
        hook = admin.post(
            "/admin/webhooks",
            json={
                "name": "Axe hook",
                "url": f"http://127.0.0.1:{free_port()}/gone",
                "events": ["*"],
                "secret": "s" * 24,
                "retry_policy": {"max_attempts": 1},
            },
        ).json()["data"]
        admin.post("/admin/api-keys", json={"name": "Axe key", "permissions": ["read:cases"]})
    return {"case": case["id"], "document": document["id"], "group": group["id"], "hook": hook["id"]}


def _check(page: Page, problems: dict[str, list[str]], label: str) -> None:
    problems[label] = serious_violations(page)


def test_every_new_page_has_no_serious_accessibility_violation(web: Web) -> None:
    ids = _fill(web)
    case, document = ids["case"], ids["document"]
    problems: dict[str, list[str]] = {}
    phone = ("/app/conflicts", "/app/trash", "/app/admin/api-keys", f"/app/documents/{document}")
    for width in (1280, 390) if web.backend == "sqlite" else (1280,):
        page = web.page(width=width)
        web.sign_in(page, ADMIN_EMAIL, ADMIN_PASSWORD)
        paths = [
            f"/app/documents/{document}",
            f"/app/documents/{document}?page=1&start=0&end=3",  # a citation no passage holds
            f"/app/matters/{case}/ask",
            "/app/conflicts",
            "/app/trash",
            "/app/admin/users",
            "/app/admin/groups",
            f"/app/admin/groups/{ids['group']}",
            "/app/admin/groups/grp_does_not_exist",  # the error page
            "/app/admin/api-keys",
            "/app/admin/webhooks",
            f"/app/admin/webhooks/{ids['hook']}",
            "/app/admin/deliveries",
            "/app/admin/deliveries?status=succeeded",
            "/app/admin/config",
        ]
        for path in paths if width > 390 else phone:
            page.goto(path)
            _check(page, problems, f"{path}@{width}")
        # Filled and error states: a conflict check with hits, an answer, a refused question, a
        # new key shown once, a test that failed.
        page.goto("/app/conflicts")
        page.get_by_label("Names").fill("Axe Client Ltd")
        page.get_by_role("button", name="Check for conflicts").click()
        expect(page.locator(".warning")).to_be_visible()
        _check(page, problems, f"conflicts with hits@{width}")
        page.goto(f"/app/matters/{case}/ask")
        page.get_by_label("Question").fill("What is this about?")
        page.get_by_role("button", name="Ask", exact=True).click()
        expect(page.locator("#answer")).to_be_visible()
        _check(page, problems, f"ask answered@{width}")
        page.get_by_label("Question").fill("ab")
        page.locator("#question").evaluate("field => field.removeAttribute('minlength')")
        page.get_by_role("button", name="Ask", exact=True).click()
        expect(page.locator("#question-error")).to_be_visible()
        _check(page, problems, f"ask refused@{width}")
        page.goto("/app/admin/api-keys")
        page.get_by_text("Create a key").click()
        page.get_by_label("Name").fill(f"Axe key {width}")
        page.get_by_role("button", name="Create key").click()
        expect(page.locator("#new-key")).to_be_visible()
        _check(page, problems, f"new key@{width}")
        page.goto(f"/app/admin/webhooks/{ids['hook']}")
        page.get_by_role("button", name="Send a test").click()
        expect(page.locator("#test-outcome")).to_contain_text("Test failed")
        _check(page, problems, f"failed test@{width}")
    # Refused: a non-administrator on an administrators' page.
    _, email = web.user("attorney")
    page = web.page()
    web.sign_in(page, email, USER_PASSWORD)
    page.goto("/app/trash")
    _check(page, problems, "trash refused")
    assert {k: v for k, v in problems.items() if v} == {}


def test_the_documents_tab_uploads_without_javascript(web: Web) -> None:
    _, email = web.user("attorney")
    with web.api.admin() as admin:
        case_id = admin.post("/cases", json={"title": "No-script uploads"}).json()["data"]["id"]
    page = web.page(javascript=False)
    web.sign_in(page, email, USER_PASSWORD)
    page.goto(f"/app/matters/{case_id}/documents")
    page.get_by_label("Files").set_input_files(
        files=[{"name": "plain.txt", "mimeType": "text/plain", "buffer": b"Uploaded without script."}]
    )
    page.get_by_role("button", name="Upload", exact=True).click()
    expect(page.locator("#documents")).to_contain_text("plain.txt")
    page.get_by_role("link", name="plain.txt", exact=True).click()
    expect(page.get_by_text("No preview for this type of file")).to_be_visible()
