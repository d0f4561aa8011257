"""Every page of the web app passes axe-core (the copy shipped in axe-playwright-python) with no
serious or critical violation (WCAG 2.1 A and AA rules, colour contrast included), is usable with
the keyboard alone, and its reading pages work with JavaScript off."""

from __future__ import annotations

import re
from datetime import date, timedelta

from playwright.sync_api import expect

from tests.web.conftest import USER_PASSWORD, Web, serious_violations


def _matter_with_everything(web: Web, assignee_id: str) -> str:
    with web.api.admin() as admin:
        case = admin.post(
            "/cases",
            json={"title": "Accessible matter", "client_name": "Access Ability Ltd", "case_type": "Advice"},
        ).json()["data"]
        soon = (date.today() + timedelta(days=1)).isoformat()
        late = (date.today() - timedelta(days=2)).isoformat()
        for title, due in (("Draft the letter", soon), ("Overdue filing", late), ("Someday", None)):
            body = {"title": title, "assignee_id": assignee_id, "due_at": due}
            assert admin.post(f"/cases/{case['id']}/tasks", json=body).status_code == 201
        assert admin.post(f"/cases/{case['id']}/notes", json={"body": "A note."}).status_code == 201
        admin.post(f"/cases/{case['id']}/documents", files={"file": ("a.txt", b"text", "text/plain")})
    return str(case["id"])


def test_the_check_finds_what_it_looks_for(web: Web) -> None:
    """The check itself: a page with low-contrast text and an unlabelled field fails it."""
    page = web.page()
    page.set_content(
        '<html lang="en"><title>t</title><main><p style="color:#ccc;background:#fff">faint</p>'
        "<input type=text></main></html>"
    )
    found = " ".join(serious_violations(page))
    assert "color-contrast (serious)" in found and "label (critical)" in found


def test_every_page_has_no_serious_accessibility_violation(web: Web) -> None:
    user, email = web.user("attorney")
    case_id = _matter_with_everything(web, user["id"])
    problems: dict[str, list[str]] = {}
    # Every page at desktop width; at phone width (where the layout changes: navigation, filters,
    # columns) the pages of each layout, on one database (the HTML is the same on both).
    phone = ("/app", "/app/matters", "/app/search?q=Accessible", f"/app/matters/{case_id}/tasks")
    for width in (1280, 390) if web.backend == "sqlite" else (1280,):
        page = web.page(width=width)
        page.goto("/app/sign-in")
        problems[f"sign-in@{width}"] = serious_violations(page)
        web.sign_in(page, email, USER_PASSWORD)
        paths = [
            "/app",
            "/app/matters",
            "/app/matters?search=nothing-matches-this",
            "/app/matters?status=bogus",  # the error state
            f"/app/matters/{case_id}",
            f"/app/matters/{case_id}/parties",
            f"/app/matters/{case_id}/notes",
            f"/app/matters/{case_id}/tasks",
            f"/app/matters/{case_id}/documents",
            f"/app/matters/{case_id}/deadlines?trigger=frcp::service&trigger_date=2026-12-04",
            "/app/matters/case_does_not_exist",  # the error page
            "/app/search",
            "/app/search?q=Accessible",
            "/app/search?q=zzzzqqqq",
        ]
        for path in paths if width > 390 else phone:
            page.goto(path)
            problems[f"{path}@{width}"] = serious_violations(page)
        page.goto("/app/matters/new")
        page.get_by_label("Client name").fill("Access Ability Ltd")
        expect(page.locator(".warning")).to_be_visible()
        problems[f"new matter with hits@{width}"] = serious_violations(page)
    assert {k: v for k, v in problems.items() if v} == {}


def test_the_keyboard_alone_reaches_and_uses_the_pages(web: Web) -> None:
    _, email = web.user("attorney")
    page = web.page()
    page.goto("/app/sign-in")
    page.keyboard.press("Tab")  # the skip link comes first
    expect(page.get_by_role("link", name="Skip to main content")).to_be_focused()
    page.get_by_label("Email").focus()
    page.keyboard.type(email)
    page.keyboard.press("Tab")
    page.keyboard.type(USER_PASSWORD)
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"/app$"))
    # Tab from the top to the main navigation (the focus is visible), and follow it with Enter.
    for _ in range(10):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.textContent") == "Matters":
            break
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") == "solid"
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Matters", level=1)).to_be_visible()


def test_reading_pages_work_with_javascript_off(web: Web) -> None:
    user, email = web.user("attorney")
    case_id = _matter_with_everything(web, user["id"])
    page = web.page(javascript=False)
    web.sign_in(page, email, USER_PASSWORD)
    expect(page.locator("#soon")).to_contain_text("Overdue filing")
    # Overdue first, then the next due.
    expect(page.locator("#soon .task-title")).to_have_text(["Overdue filing", "Draft the letter"])
    expect(page.locator("#later")).to_contain_text("Someday")
    page.goto("/app/matters?search=Accessible")
    page.get_by_role("link", name="Accessible matter").first.click()
    expect(page.get_by_role("heading", name="Accessible matter", level=1)).to_be_visible()
    for tab, shown in (("Notes", "A note."), ("Tasks", "Draft the letter"), ("Documents", "a.txt")):
        page.get_by_role("link", name=tab, exact=True).click()
        expect(page.locator("main")).to_contain_text(shown)
    # Forms post without script too: complete a task from the matter's tasks tab.
    page.goto(f"/app/matters/{case_id}/tasks")
    page.get_by_role("button", name="Complete Someday").click()
    expect(page.locator("#tasks li", has_text="Someday")).to_contain_text("Done")
