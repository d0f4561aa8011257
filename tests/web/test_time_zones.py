"""Dates and times in the user's time zone: by default the browser's (static/tz.js sets the
cookie the pages are rendered with), or the one the user picks on the settings page, which is
kept on their account and so follows them to every browser."""

from __future__ import annotations

import re
from datetime import datetime
from zoneinfo import ZoneInfo

from playwright.sync_api import Page, expect

from tests.web.conftest import USER_PASSWORD, Web, serious_violations


def _shown(iso: str, zone: str) -> str:
    local = datetime.fromisoformat(iso.replace("Z", "+00:00")).astimezone(ZoneInfo(zone))
    return local.strftime("%Y-%m-%d %H:%M ") + str(local.tzname())


def _opened(page: Page, case_id: str) -> str:
    page.goto(f"/app/matters/{case_id}")
    return page.locator("dt:has-text('Opened') + dd").inner_text()


def test_times_follow_the_browser_zone_until_the_user_picks_one(web: Web) -> None:
    # A user of their own: the zone they pick is kept on their account.
    user, email = web.user("attorney")
    with web.api.admin() as admin:
        case = admin.post("/cases", json={"title": "Zones v. Clocks"}).json()["data"]
    context = web.browser.new_context(base_url=web.root, timezone_id="America/New_York")
    try:
        page = context.new_page()
        page.set_default_timeout(10_000)
        web.sign_in(page, email, USER_PASSWORD)
        # The browser's zone, from the first page on (tz.js ran on the sign-in page).
        assert [c["value"] for c in context.cookies() if c["name"] == "casefile_tz"] == ["America/New_York"]
        assert _opened(page, case["id"]) == _shown(case["created_at"], "America/New_York")

        # The user picks another zone: every page uses it, and tz.js does not undo the choice.
        page.get_by_role("link", name=re.compile("^" + re.escape(user["name"]))).click()
        expect(page.get_by_role("heading", level=1)).to_have_text("Settings")
        page.get_by_label("Time zone").select_option("Asia/Tokyo")
        page.get_by_role("button", name="Save settings").click()
        expect(page.get_by_role("status")).to_have_text("Saved.")
        expect(page.get_by_label("Time zone")).to_have_value("Asia/Tokyo")
        assert serious_violations(page) == []
        web.screenshot(page, "settings")
        assert _opened(page, case["id"]) == _shown(case["created_at"], "Asia/Tokyo")
        assert _opened(page, case["id"]).endswith(" JST")

        # The choice is the account's: another browser, elsewhere, shows the same zone.
        elsewhere = web.browser.new_context(base_url=web.root, timezone_id="Europe/Paris")
        try:
            other = elsewhere.new_page()
            other.set_default_timeout(10_000)
            web.sign_in(other, email, USER_PASSWORD)
            assert _opened(other, case["id"]) == _shown(case["created_at"], "Asia/Tokyo")
            other.goto("/app/settings")
            expect(other.get_by_label("Time zone")).to_have_value("Asia/Tokyo")
        finally:
            elsewhere.close()

        # Back to the browser's own.
        page.goto("/app/settings")
        page.get_by_label("Time zone").select_option("browser")
        page.get_by_role("button", name="Save settings").click()
        page.goto("/app")
        assert _opened(page, case["id"]) == _shown(case["created_at"], "America/New_York")
        page.goto("/app/settings")
        expect(page.get_by_label("Time zone")).to_have_value("browser")

        # A zone that does not exist is refused: the account keeps the browser's.
        token = page.locator("input[name=csrf_token]").first.get_attribute("value")
        refused = page.request.post(
            "/app/settings", form={"csrf_token": str(token), "time_zone": "Mars/Olympus"}, max_redirects=0
        )
        assert refused.status == 422
        assert _opened(page, case["id"]) == _shown(case["created_at"], "America/New_York")

        # A forged cookie falls back to UTC.
        context.add_cookies([{"name": "casefile_tz", "value": "Mars/Olympus", "url": web.root + "/app"}])
        assert _opened(page, case["id"]) == _shown(case["created_at"], "UTC")
    finally:
        context.close()


def test_without_javascript_times_are_in_utc(web: Web) -> None:
    with web.api.admin() as admin:
        case = admin.post("/cases", json={"title": "No script"}).json()["data"]
    page = web.page(javascript=False)
    web.sign_in(page)
    assert _opened(page, case["id"]) == _shown(case["created_at"], "UTC")
