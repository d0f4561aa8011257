"""The main path of a member of staff, in a real browser: sign in, open a matter and see the
conflict check's warning before saving, add a task and complete it from My day, sign out."""

from __future__ import annotations

import re
from datetime import date, timedelta
from pathlib import Path

from playwright.sync_api import expect

from tests.web.conftest import USER_PASSWORD, Web, serious_violations


def test_sign_in_open_a_matter_with_a_conflict_complete_a_task_sign_out(web: Web) -> None:
    with web.api.admin() as admin:
        earlier = admin.post(
            "/cases", json={"title": "Acme Holdings: lease review", "client_name": "Acme Holdings Ltd"}
        )
        assert earlier.status_code == 201, earlier.text
    user, email = web.user("attorney")
    page = web.page()

    page.goto("/app")
    expect(page).to_have_url(re.compile(r"/app/sign-in\?next=/app$"))
    expect(page.get_by_role("heading", name="Sign in to Casefile")).to_be_visible()
    web.screenshot(page, "sign-in")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill("not the password")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_have_text("Wrong email or password")
    web.sign_in(page, email, USER_PASSWORD)
    expect(page.get_by_role("heading", name="My day", level=1)).to_be_visible()
    expect(page.get_by_text("Nothing of yours is due in the next 14 days.")).to_be_visible()

    # New matter: the conflict check runs as the names are typed, before anything is saved.
    page.get_by_role("navigation", name="Main").get_by_role("link", name="New matter").click()
    page.get_by_label("Title").fill("Globex v. Acme: supply contract")
    page.get_by_label("Client name").fill("Globex Corporation")
    page.get_by_label("Adverse parties").fill("Acme Holdings Ltd")
    warning = page.locator(".warning")
    expect(warning).to_contain_text("Possible conflicts")
    expect(page.locator(".hits")).to_contain_text("matches “Acme Holdings Ltd”")
    page.get_by_label("Type").fill("Commercial litigation")
    page.get_by_label("Priority").select_option("high")
    web.screenshot(page, "new-matter")
    page.get_by_role("button", name="Create matter").click()
    expect(page).to_have_url(re.compile(r"/app/matters/case_[0-9a-z]+$"))
    case_id = page.url.rsplit("/", 1)[1]
    expect(page.get_by_role("heading", name="Globex v. Acme: supply contract", level=1)).to_be_visible()

    # Status buttons: only the moves the lifecycle allows from `active`.
    buttons = page.get_by_role("button", name=re.compile(r"^Move to "))
    expect(buttons).to_have_text(["Move to Closed", "Move to On hold", "Move to Pending"])
    web.screenshot(page, "matter-overview")

    # The same matter through the API: the adverse party was added, the check recorded.
    with web.api.admin() as admin:
        parties = admin.get(f"/cases/{case_id}/parties").json()["data"]
        assert sorted(p["role"] for p in parties) == ["adverse_party", "client"]

    # Parties: the client, and the adverse party with the conflict check its addition ran.
    page.get_by_role("navigation", name="Matter sections").get_by_role("link", name="Parties").click()
    adverse = page.locator("#parties > li", has_text="Adverse party")
    expect(adverse).to_contain_text("Acme Holdings Ltd")
    expect(adverse).to_contain_text("possible conflict")
    client = page.locator("#parties > li", has_text="Globex Corporation")
    expect(client.locator(".badge").first).to_have_text("Client")
    web.screenshot(page, "matter-parties")

    page.get_by_role("navigation", name="Matter sections").get_by_role("link", name="Notes").click()
    page.get_by_label("New note").fill("Client called: the supplier stopped deliveries on 2 November.")
    page.get_by_role("button", name="Add note").click()
    expect(page.locator("#notes")).to_contain_text("stopped deliveries")
    web.screenshot(page, "matter-notes")

    page.get_by_role("link", name="Documents").click()
    page.get_by_label("File").set_input_files(
        files=[
            {"name": "supply-agreement.txt", "mimeType": "text/plain", "buffer": b"Supply agreement, 2025."}
        ]
    )
    page.get_by_role("button", name="Upload", exact=True).click()
    expect(page.locator("#documents")).to_contain_text("supply-agreement.txt")
    with page.expect_download() as download:
        page.get_by_role("link", name="Download supply-agreement.txt").click()
    assert Path(download.value.path()).read_bytes() == b"Supply agreement, 2025."
    web.screenshot(page, "matter-documents")

    # A task due in three days, assigned to me: it is on My day, and leaves it once completed.
    page.get_by_role("link", name="Tasks").click()
    page.get_by_label("Task", exact=True).fill("File the answer")
    page.get_by_label("Due").fill((date.today() + timedelta(days=3)).isoformat())
    page.get_by_label("Assign to").select_option("me")
    page.get_by_role("button", name="Add task").click()
    expect(page.locator("#tasks")).to_contain_text("File the answer")
    web.screenshot(page, "matter-tasks")

    page.get_by_role("link", name="My day").click()
    expect(page.locator("#soon")).to_contain_text("File the answer")
    expect(page.locator("#recent")).to_contain_text("Globex v. Acme: supply contract")
    web.screenshot(page, "my-day")
    page.get_by_role("button", name="Complete File the answer").click()
    expect(page).to_have_url(re.compile(r"/app$"))
    expect(page.get_by_text("File the answer")).to_have_count(0)
    expect(page.get_by_text("Nothing of yours is due in the next 14 days.")).to_be_visible()
    with web.api.admin() as admin:
        tasks = admin.get(f"/cases/{case_id}/tasks").json()["data"]
        assert [(t["title"], t["status"], t["assignee_id"]) for t in tasks] == [
            ("File the answer", "done", user["id"])
        ]

    page.get_by_role("link", name="Matters", exact=True).click()
    page.get_by_label("Search").fill("Globex")
    page.get_by_role("button", name="Apply").click()
    expect(page).to_have_url(re.compile(r"/app/matters\?search=Globex"))
    expect(page.locator("#matters tbody tr")).to_have_count(1)
    page.get_by_label("Search").fill("")
    page.get_by_role("button", name="Apply").click()
    web.screenshot(page, "matters")

    page.get_by_role("navigation", name="Main").get_by_role("link", name="Search").click()
    expect(page.get_by_text("Search the titles, numbers, clients and descriptions")).to_be_visible()
    page.get_by_label("Search for").fill("supply Globex")
    page.get_by_role("button", name="Search").click()
    expect(page).to_have_url(re.compile(r"/app/search\?q=supply\+Globex"))
    expect(page.locator("#results li").first).to_contain_text("Globex v. Acme: supply contract")
    expect(page.locator("#results mark").first).to_be_visible()  # the matched words, highlighted
    web.screenshot(page, "search")

    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("status")).to_have_text("You are signed out.")
    page.goto("/app/matters")
    expect(page).to_have_url(re.compile(r"/app/sign-in\?next=/app/matters$"))


def test_a_phone_sized_screen_shows_every_page_without_sideways_scrolling(web: Web) -> None:
    _, email = web.user("paralegal")
    with web.api.admin() as admin:
        case = admin.post(
            "/cases", json={"title": "Narrow screen matter", "client_name": "Pocket Ltd"}
        ).json()["data"]
    page = web.page(width=390, height=844)
    web.sign_in(page, email, USER_PASSWORD)
    for path in (
        "/app",
        "/app/matters",
        "/app/matters/new",
        f"/app/matters/{case['id']}",
        f"/app/matters/{case['id']}/tasks",
    ):
        page.goto(path)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, (path, width)
    page.goto("/app")
    web.screenshot(page, "my-day-phone")


def test_the_activity_tab_is_for_those_who_manage_the_matter(web: Web) -> None:
    _, email = web.user("attorney")
    with web.api.admin() as admin:
        case = admin.post("/cases", json={"title": "Audited matter", "client_name": "Trail Ltd"}).json()[
            "data"
        ]
    manager = web.page()
    web.sign_in(manager)  # the administrator manages every matter they are not walled off from
    manager.goto(f"/app/matters/{case['id']}")
    manager.get_by_role("link", name="Activity").click()
    rows = manager.locator("#activity tbody tr")
    expect(rows.filter(has_text="case.created")).to_have_count(1)
    expect(rows.filter(has_text="case.read").first).to_be_visible()
    assert serious_violations(manager) == []
    web.screenshot(manager, "matter-activity")
    # An attorney may read and change the matter, not its trail: no tab, and the page refuses.
    attorney = web.page()
    web.sign_in(attorney, email, USER_PASSWORD)
    attorney.goto(f"/app/matters/{case['id']}")
    expect(attorney.get_by_role("link", name="Tasks")).to_be_visible()
    expect(attorney.get_by_role("link", name="Activity")).to_have_count(0)
    refused = attorney.goto(f"/app/matters/{case['id']}/activity")
    assert refused is not None and refused.status == 403
    expect(attorney.get_by_role("heading", level=1)).to_have_text("Not allowed")


def test_deadlines_are_computed_with_their_trace_and_saved_as_tasks(web: Web) -> None:
    user, email = web.user("attorney")
    with web.api.admin() as admin:
        body = {"title": "Deadline matter", "client_name": "Calendar Ltd"}
        case = admin.post("/cases", json=body).json()["data"]
    page = web.page()
    web.sign_in(page, email, USER_PASSWORD)
    page.goto(f"/app/matters/{case['id']}")
    page.get_by_role("link", name="Deadlines").click()
    expect(page.get_by_text("No deadlines saved on this matter yet.")).to_be_visible()
    page.get_by_label("Rule set and trigger").select_option("frcp::service")
    page.get_by_label("Trigger date").fill("2026-12-04")
    page.get_by_role("button", name="Compute").click()
    # Served 4 December 2026: 21 days is Christmas Day (a holiday), so the answer is due the 28th.
    answer = page.locator("#computed li", has_text="Answer to the complaint")
    expect(answer).to_contain_text("due 2026-12-28")
    answer.get_by_text("How it was counted").click()
    expect(answer.locator("details ol")).to_contain_text("2026-12-25")
    web.screenshot(page, "matter-deadlines")
    page.get_by_role("button", name="Save as tasks").click()
    expect(page.get_by_role("status")).to_contain_text("Deadlines saved")
    expect(page.locator("#saved-deadlines li")).to_have_count(1)
    with web.api.admin() as admin:
        saved = admin.get(f"/cases/{case['id']}/deadlines").json()["data"]
        tasks = admin.get("/tasks", params={"deadline_id": saved[0]["id"]}).json()["data"]
    assert ("Answer to the complaint", "2026-12-28", user["id"]) in {
        (t["title"], t["due_at"], t["assignee_id"]) for t in tasks
    }
    # A computation the rule set cannot make is shown as the tab's error, not a broken page.
    page.goto(f"/app/matters/{case['id']}/deadlines?trigger=frcp::no-such-trigger&trigger_date=2026-12-04")
    expect(page.get_by_role("alert")).to_contain_text("could not be computed")
