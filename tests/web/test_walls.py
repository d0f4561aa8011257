"""The browser is a new path for leaks: a user walled off a matter finds no trace of it on any
page of the web app (My day, the matters list and its search, the matter's tabs, its documents,
the conflict check beyond "a matter exists"), while a colleague sees it. One rule path: the
pages are refused exactly as the API refuses the same user."""

from __future__ import annotations

from datetime import date, timedelta

from playwright.sync_api import Page, expect

from tests.web.conftest import USER_PASSWORD, Web

SECRET_TITLE = "Project Nightingale: merger"
SECRET_CLIENT = "Zephyrine Dynamics"


def _page_text(page: Page) -> str:
    return page.content()


def test_a_walled_user_finds_no_trace_of_the_matter(web: Web) -> None:
    walled, walled_email = web.user("attorney")
    _, colleague_email = web.user("attorney")
    with web.api.admin() as admin:
        case = admin.post(
            "/cases", json={"title": SECRET_TITLE, "client_name": SECRET_CLIENT, "case_type": "M&A"}
        ).json()["data"]
        due = (date.today() + timedelta(days=2)).isoformat()
        task = admin.post(
            f"/cases/{case['id']}/tasks",
            json={"title": "Nightingale board memo", "assignee_id": walled["id"], "due_at": due},
        )
        assert task.status_code == 201, task.text
        assert (
            admin.post(f"/cases/{case['id']}/notes", json={"body": "Nightingale price: 41"}).status_code
            == 201
        )
        document = admin.post(
            f"/cases/{case['id']}/documents", files={"file": ("nightingale.txt", b"term sheet", "text/plain")}
        ).json()["data"]
        walls = [{"subject_type": "user", "subject_id": walled["id"], "reason": "acted for the buyer"}]
        wall = admin.put(f"/cases/{case['id']}/access", json={"access": "firm", "walls": walls})
        assert wall.status_code == 200, wall.text
    # (A search for "Nightingale" shows that word in its own search box: the traces are the matter's.)
    traces = (SECRET_TITLE, SECRET_CLIENT, case["id"], case["case_number"], document["id"])
    traces += ("Nightingale board memo", "Nightingale price", "nightingale.txt")

    # A colleague who is not walled off sees it all, so the pages below do show what exists.
    colleague = web.page()
    web.sign_in(colleague, colleague_email, USER_PASSWORD)
    colleague.goto("/app/matters?search=Nightingale")
    expect(colleague.locator("#matters")).to_contain_text(SECRET_TITLE)
    colleague.goto("/app/search?q=Nightingale")
    expect(colleague.locator("#results")).to_contain_text(SECRET_TITLE)
    colleague.goto(f"/app/matters/{case['id']}/notes")
    expect(colleague.locator("#notes")).to_contain_text("Nightingale price")

    page = web.page()
    web.sign_in(page, walled_email, USER_PASSWORD)
    pages = [
        "/app",
        "/app/matters",
        "/app/matters?search=Nightingale",
        "/app/matters?case_type=M%26A",
        "/app/matters?sort=title&order=desc",
        "/app/search?q=Nightingale",
        "/app/search?q=Zephyrine&kind=case",
        "/app/search?q=nightingale&kind=document",
    ]
    for path in pages:
        page.goto(path)
        text = _page_text(page)
        assert not [t for t in traces if t in text], path
    for path in ("", "/parties", "/notes", "/tasks", "/deadlines", "/documents", "/activity"):
        response = page.goto(f"/app/matters/{case['id']}{path}")
        assert response is not None and response.status == 404
        expect(page.get_by_role("heading", level=1)).to_have_text("Not found")
        assert not [t for t in traces if t in _page_text(page)], path
    response = page.goto(f"/app/documents/{document['id']}/download")
    assert response is not None and response.status == 404
    # The same user through the API: refused alike (one rule path).
    token = web.api.login(walled_email, USER_PASSWORD)["token"]
    with web.api.client(token=token) as api:
        assert api.get(f"/cases/{case['id']}").status_code == 404
        assert api.get("/tasks", params={"assignee_id": "me"}).json()["data"] == []

    # The conflict check: only that some matter matches, never which or whose.
    page.goto("/app/matters/new")
    page.get_by_label("Adverse parties").fill(SECRET_CLIENT)
    hits = page.locator(".hits")
    expect(hits).to_contain_text("matches a matter that exists but that you may not see")
    conflict_text = page.locator("#conflicts").inner_html()
    assert not [t for t in (SECRET_TITLE, case["id"], case["case_number"], "Client") if t in conflict_text]
    # Saved, the matter's adverse party keeps its check: shown on the parties tab, redacted alike.
    page.get_by_label("Title").fill("Buyer-side review")
    page.get_by_role("button", name="Create matter").click()
    page.get_by_role("link", name="Parties").click()
    expect(page.locator("#parties")).to_contain_text("a matter that exists but that you may not see")
    assert not [t for t in traces if t in page.content() and t != SECRET_CLIENT]
    assert SECRET_TITLE not in page.content() and case["id"] not in page.content()
    # Without JavaScript, the same check by its button: the same answer.
    no_script = web.page(javascript=False)
    web.sign_in(no_script, walled_email, USER_PASSWORD)
    no_script.goto("/app/matters/new")
    no_script.get_by_label("Adverse parties").fill(SECRET_CLIENT)
    no_script.get_by_role("button", name="Check for conflicts").click()
    expect(no_script.locator(".hits")).to_contain_text(
        "matches a matter that exists but that you may not see"
    )
    assert case["id"] not in no_script.locator("#conflicts").inner_html()
