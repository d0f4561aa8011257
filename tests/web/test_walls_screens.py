"""The second round's screens are new paths for leaks: a user walled off a matter finds no trace
of it on the document pages, "Ask", the conflict check page (beyond "a matter that exists"), and,
for an administrator walled off it, the trash, the webhooks' deliveries and dead letters and the
API keys; restoring, retrying or asking about it is the API's 404. A colleague sees it all."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page, expect

from tests.support.servers import ADMIN_EMAIL, ADMIN_PASSWORD, free_port
from tests.support.waiting import wait_until
from tests.web.conftest import USER_PASSWORD, Web

SECRET_TITLE = "Project Kestrel: takeover defence"
SECRET_CLIENT = "Quillfeather Instruments"


def _csrf(page: Page) -> str:
    return page.locator("input[name=csrf_token]").first.input_value()


def _secret_matter(web: Web, walled: list[str]) -> dict[str, Any]:
    with web.api.admin() as admin:
        hook = admin.post(
            "/admin/webhooks",
            json={
                "name": "Kestrel watcher",
                "url": f"http://127.0.0.1:{free_port()}/gone",
                "events": ["document.*"],
                "secret": "s" * 24,
                "retry_policy": {"max_attempts": 1},
            },
        ).json()["data"]
        case = admin.post("/cases", json={"title": SECRET_TITLE, "client_name": SECRET_CLIENT}).json()["data"]
        upload = {"file": ("kestrel-board-minutes.txt", b"The board met about Kestrel.", "text/plain")}
        kept = admin.post(f"/cases/{case['id']}/documents", files=upload).json()["data"]
        upload = {"file": ("kestrel-old-draft.txt", b"An old draft.", "text/plain")}
        binned = admin.post(f"/cases/{case['id']}/documents", files=upload).json()["data"]
        assert admin.delete(f"/documents/{binned['id']}").status_code == 200
        key = admin.post(
            "/admin/api-keys",
            json={"name": "Kestrel data room", "permissions": ["read:cases"], "case_ids": [case["id"]]},
        )
        assert key.status_code == 201, key.text
        walls = [{"subject_type": "user", "subject_id": user_id, "reason": "conflict"} for user_id in walled]
        wall = admin.put(f"/cases/{case['id']}/access", json={"access": "firm", "walls": walls})
        assert wall.status_code == 200, wall.text

        def dead() -> list[dict[str, Any]]:
            found = admin.get("/admin/deliveries", params={"status": "dead", "limit": 100}).json()["data"]
            return [d for d in found if d["webhook_id"] == hook["id"]]

        letters = wait_until(dead, timeout=30)
    return {"case": case, "kept": kept, "binned": binned, "hook": hook, "letter": letters[0]}


def test_a_walled_user_and_a_walled_administrator_find_no_trace_on_the_new_screens(web: Web) -> None:
    walled, walled_email = web.user("attorney")
    walled_admin, walled_admin_email = web.user("admin")
    found = _secret_matter(web, [walled["id"], walled_admin["id"]])
    case, kept, binned, hook = found["case"], found["kept"], found["binned"], found["hook"]
    traces = (SECRET_TITLE, case["id"], case["case_number"], kept["id"], binned["id"])
    traces += ("kestrel-board-minutes.txt", "kestrel-old-draft.txt")

    # A colleague administrator sees it all on the same pages.
    colleague = web.page()
    web.sign_in(colleague, ADMIN_EMAIL, ADMIN_PASSWORD)
    colleague.goto("/app/trash")
    expect(colleague.locator("#trash")).to_contain_text("kestrel-old-draft.txt")
    colleague.goto(f"/app/admin/webhooks/{hook['id']}")
    expect(colleague.locator("#deliveries")).to_contain_text("document.uploaded")
    colleague.goto("/app/admin/deliveries?status=dead")
    expect(colleague.locator("#deliveries")).to_contain_text("Kestrel watcher")
    colleague.goto(f"/app/documents/{kept['id']}")
    expect(colleague.get_by_role("heading", name="kestrel-board-minutes.txt")).to_be_visible()

    # The walled attorney: documents, their preview and tags, Ask: 404, as through the API.
    page = web.page()
    web.sign_in(page, walled_email, USER_PASSWORD)
    for path in (
        f"/app/documents/{kept['id']}",
        f"/app/documents/{kept['id']}/preview",
        f"/app/matters/{case['id']}/ask",
    ):
        response = page.goto(path)
        assert response is not None and response.status == 404, path
        assert not [t for t in traces if t in page.content()], path
    page.goto("/app/conflicts")
    token = _csrf(page)
    for path, form in (
        (f"/app/matters/{case['id']}/ask", {"question": "Who sits on the board?"}),
        (f"/app/documents/{kept['id']}/tags", {"tags": "seen"}),
    ):
        refused = page.request.post(path, form={**form, "csrf_token": token})
        assert refused.status == 404, path
        assert not [t for t in traces if t in refused.text()], path
    api_token = web.api.login(walled_email, USER_PASSWORD)["token"]
    with web.api.client(token=api_token) as api:
        assert api.post(f"/cases/{case['id']}/ask", json={"question": "Who sits on it?"}).status_code == 404
        assert api.get(f"/documents/{kept['id']}").status_code == 404
    # The conflict check page: that a matter matches, never which.
    page.get_by_label("Names").fill(SECRET_CLIENT)
    page.get_by_role("button", name="Check for conflicts").click()
    expect(page.locator(".hits")).to_contain_text("matches a matter that exists but that you may not see")
    assert not [t for t in traces if t in page.content()]

    # The walled administrator: the trash, deliveries, dead letters, API keys and the conflict
    # check's recent checks show nothing of it; restoring or retrying it is a 404.
    admin_page = web.page()
    web.sign_in(admin_page, walled_admin_email, USER_PASSWORD)
    for path in (
        "/app/trash",
        "/app/admin/deliveries?status=dead",
        "/app/admin/deliveries?status=succeeded",
        f"/app/admin/webhooks/{hook['id']}",
        "/app/admin/webhooks",
        "/app/admin/api-keys",
        "/app/admin/groups",
        "/app/conflicts",
    ):
        admin_page.goto(path)
        assert not [t for t in traces if t in admin_page.content()], path
    admin_page.goto(f"/app/admin/webhooks/{hook['id']}")
    expect(admin_page.get_by_text("Nothing sent to this webhook yet.")).to_be_visible()
    admin_page.goto("/app/admin/api-keys")
    expect(admin_page.locator("#keys tr", has_text="Kestrel data room")).to_contain_text("1 matter")
    token = _csrf(admin_page)
    for path in (
        f"/app/trash/{binned['id']}/restore",
        f"/app/admin/deliveries/{found['letter']['id']}/retry",
    ):
        refused = admin_page.request.post(path, form={"csrf_token": token})
        assert refused.status == 404, path
        assert not [t for t in traces if t in refused.text()], path
    with web.api.admin() as admin:
        assert admin.get(f"/documents/{binned['id']}").status_code == 404  # still in the trash
