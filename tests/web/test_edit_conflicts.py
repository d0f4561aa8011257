"""No lost updates in the browser: the matter form carries the version it was loaded with (the
API's ETag); saving over someone else's change shows what changed, and overwrites only when asked."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.web.conftest import Web, serious_violations


def test_the_same_matter_edited_in_two_tabs_shows_the_conflict_then_overwrites_deliberately(web: Web) -> None:
    with web.api.admin() as admin:
        case = admin.post("/cases", json={"title": "Two tabs v. Acme", "client_name": "Ann Able"}).json()[
            "data"
        ]
    first = web.page()
    web.sign_in(first)
    second = first.context.new_page()  # a second tab of the same browser
    url = f"/app/matters/{case['id']}"
    first.goto(url)
    second.goto(url)

    # The first tab saves a new title and client.
    first.get_by_label("Title").fill("Two tabs v. Acme Corp")
    first.get_by_label("Client name").fill("Ann Able-Baker")
    first.get_by_role("button", name="Save changes").click()
    expect(first.get_by_role("status")).to_have_text("Saved.")

    # The second tab, loaded before that, saves its own title: refused, showing what changed.
    second.get_by_label("Title").fill("Two tabs v. Acme Inc")
    second.get_by_label("Jurisdiction").fill("Delaware")
    second.get_by_role("button", name="Save changes").click()
    alert = second.get_by_role("alert")
    expect(alert).to_contain_text("someone else changed this matter after you opened it")
    title_row = alert.get_by_role("row", name="Title")
    expect(title_row).to_contain_text("Two tabs v. Acme")
    expect(title_row.get_by_role("cell").nth(1)).to_have_text("Two tabs v. Acme Corp")
    expect(title_row.get_by_role("cell").nth(2)).to_have_text("Two tabs v. Acme Inc")
    expect(alert.get_by_role("row", name="Client name")).to_contain_text("Ann Able-Baker")
    # Nothing was saved: the API has the first tab's version.
    with web.api.admin() as admin:
        now = admin.get(f"/cases/{case['id']}").json()["data"]
    assert (now["title"], now["client_name"], now["jurisdiction"]) == (
        "Two tabs v. Acme Corp",
        "Ann Able-Baker",
        None,
    )
    # The user's own edits are kept in the form.
    expect(second.get_by_label("Title")).to_have_value("Two tabs v. Acme Inc")
    expect(second.get_by_label("Jurisdiction")).to_have_value("Delaware")
    assert serious_violations(second) == []
    web.screenshot(second, "matter-edit-conflict")

    # Overwriting deliberately saves this tab's values over the other's.
    second.get_by_role("button", name="Overwrite with my changes").click()
    expect(second.get_by_role("status")).to_have_text("Saved.")
    with web.api.admin() as admin:
        now = admin.get(f"/cases/{case['id']}").json()["data"]
    assert (now["title"], now["jurisdiction"]) == ("Two tabs v. Acme Inc", "Delaware")

    # The first tab's form is now stale too; "reload the matter" shows the current version.
    first.get_by_label("Description").fill("Late words")
    first.get_by_role("button", name="Save changes").click()
    expect(first.get_by_role("alert")).to_contain_text("someone else changed this matter")
    first.get_by_role("link", name="reload the matter").click()
    expect(first.get_by_label("Title")).to_have_value("Two tabs v. Acme Inc")
    expect(first.get_by_label("Description")).to_have_value("")


def test_the_configuration_saved_in_two_tabs_keeps_both_and_shows_a_clash(web: Web) -> None:
    """Two administrators' forms: the second's save sends only what it changed, so the first's
    change to another value survives; a value both changed is not saved until overwritten."""
    first = web.page()
    web.sign_in(first)
    second = first.context.new_page()
    first.goto("/app/admin/config")
    second.goto("/app/admin/config")
    try:
        first.get_by_label("Days before deleted items are purged").fill("41")
        first.get_by_role("button", name="Save configuration").click()
        expect(first.get_by_role("status")).to_contain_text("Saved")

        # The second tab, loaded before, changes another value: saved, and the first's stays.
        second.get_by_label("Attempts").fill("7")
        second.get_by_role("button", name="Save configuration").click()
        expect(second.get_by_role("status")).to_contain_text("Saved")
        with web.api.admin() as admin:
            now = admin.get("/admin/config").json()["data"]
        assert now["retention"]["trash_days"] == 41
        assert now["webhooks"]["default_retry_policy"]["max_attempts"] == 7

        # A third tab loaded now, and the first saves the same value again: a clash, nothing saved.
        third = first.context.new_page()
        third.goto("/app/admin/config")
        first.goto("/app/admin/config")
        first.get_by_label("Days before deleted items are purged").fill("50")
        first.get_by_role("button", name="Save configuration").click()
        third.get_by_label("Days before deleted items are purged").fill("60")
        third.get_by_role("button", name="Save configuration").click()
        alert = third.get_by_role("alert")
        expect(alert).to_contain_text("someone else changed the configuration after you opened it")
        row = alert.get_by_role("row", name="retention.trash_days")
        expect(row.get_by_role("cell").nth(0)).to_have_text("50")
        expect(row.get_by_role("cell").nth(1)).to_have_text("60")
        expect(third.get_by_label("Days before deleted items are purged")).to_have_value("50")
        assert serious_violations(third) == []
        web.screenshot(third, "admin-config-clash")
        with web.api.admin() as admin:
            assert admin.get("/admin/config").json()["data"]["retention"]["trash_days"] == 50

        third.get_by_role("button", name="Overwrite with my changes").click()
        expect(third.get_by_role("status")).to_contain_text("Saved")
        with web.api.admin() as admin:
            assert admin.get("/admin/config").json()["data"]["retention"]["trash_days"] == 60
    finally:
        with web.api.admin() as admin:
            admin.patch("/admin/config", json={"retention": None, "webhooks": None})
