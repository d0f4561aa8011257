"""The matter's access tab: an administrator restricts a matter, grants and walls through the
API's access services (what the API then reads back); others neither see the tab nor reach it."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.web.conftest import USER_PASSWORD, Web, serious_violations


def test_an_administrator_restricts_grants_and_walls_and_others_cannot_see_the_tab(web: Web) -> None:
    granted, granted_email = web.user("attorney")
    walled, walled_email = web.user("attorney")
    with web.api.admin() as admin:
        case = admin.post("/cases", json={"title": "Access v. Tab"}).json()["data"]
    page = web.page()
    web.sign_in(page)
    page.goto(f"/app/matters/{case['id']}")
    page.get_by_role("navigation", name="Matter sections").get_by_role("link", name="Access").click()
    expect(page.get_by_role("heading", name="Access", level=2)).to_be_visible()
    expect(page.get_by_text("No grants.")).to_be_visible()

    page.get_by_label("Restricted").check()
    page.get_by_role("button", name="Save access").click()
    expect(page.get_by_role("status")).to_have_text("Saved.")
    grant = page.get_by_role("form", name="Add a grant")
    grant.get_by_label("User or group").select_option(f"user:{granted['id']}")
    grant.get_by_label("Level").select_option("write")
    grant.get_by_role("button", name="Add grant").click()
    expect(page.locator("#grants")).to_contain_text(granted_email)
    wall = page.get_by_role("form", name="Add a wall")
    wall.get_by_label("User or group").select_option(f"user:{walled['id']}")
    wall.get_by_label("Reason").fill("Acted for the other side")
    wall.get_by_role("button", name="Add wall").click()
    expect(page.locator("#walls")).to_contain_text("Acted for the other side")
    assert serious_violations(page) == []
    web.screenshot(page, "matter-access")

    # The API reads back what the page set.
    with web.api.admin() as admin:
        settings = admin.get(f"/cases/{case['id']}/access").json()["data"]
    assert settings == {
        "access": "restricted",
        "grants": [{"subject_type": "user", "subject_id": granted["id"], "level": "write"}],
        "walls": [{"subject_type": "user", "subject_id": walled["id"], "reason": "Acted for the other side"}],
    }

    # The service's rules: a grant of the same user twice is refused, shown on the page.
    grant = page.get_by_role("form", name="Add a grant")
    grant.get_by_label("User or group").select_option(f"user:{granted['id']}")
    grant.get_by_role("button", name="Add grant").click()
    expect(page.get_by_role("alert")).to_contain_text("Not saved")

    # The granted attorney sees the matter, but no access tab, and the page refuses them.
    other = web.page()
    web.sign_in(other, granted_email, USER_PASSWORD)
    other.goto(f"/app/matters/{case['id']}")
    expect(other.get_by_role("heading", level=1)).to_have_text("Access v. Tab")
    tabs = other.get_by_role("navigation", name="Matter sections")
    expect(tabs.get_by_role("link", name="Overview")).to_be_visible()
    expect(tabs.get_by_role("link", name="Access")).to_have_count(0)
    refused = other.goto(f"/app/matters/{case['id']}/access")
    assert refused is not None and refused.status == 403
    # The walled attorney finds no matter at all.
    walled_page = web.page()
    web.sign_in(walled_page, walled_email, USER_PASSWORD)
    missing = walled_page.goto(f"/app/matters/{case['id']}/access")
    assert missing is not None and missing.status == 403
    missing = walled_page.goto(f"/app/matters/{case['id']}")
    assert missing is not None and missing.status == 404

    # Removing the grant takes the matter away from the attorney (restricted).
    page.goto(f"/app/matters/{case['id']}/access")
    page.get_by_role("button", name=f"Remove the grant of {granted['name']}").click()
    expect(page.get_by_text("No grants.")).to_be_visible()
    gone = other.goto(f"/app/matters/{case['id']}")
    assert gone is not None and gone.status == 404
