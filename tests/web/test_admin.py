"""Administration in the browser: users created, their role changed and disabled through the
services of `/users`, with their rules (the last administrator stays; others are refused)."""

from __future__ import annotations

import re
import secrets

from playwright.sync_api import expect

from tests.support.servers import ADMIN_EMAIL
from tests.web.conftest import USER_PASSWORD, Web, serious_violations


def test_an_administrator_creates_a_user_changes_their_role_and_disables_them(web: Web) -> None:
    page = web.page()
    web.sign_in(page)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Administration").click()
    expect(
        page.get_by_role("navigation", name="Administration").get_by_role("link", name="Users")
    ).to_have_attribute("aria-current", "page")
    email, name = f"new-{secrets.token_hex(3)}@casefile.test", f"Nora Newhire {secrets.token_hex(2)}"
    page.get_by_label("Email").fill(email)
    page.get_by_label("Name").fill(name)
    page.get_by_label("Password").fill(USER_PASSWORD)
    page.get_by_label("Role", exact=True).select_option("paralegal")
    page.get_by_role("button", name="Create user").click()
    expect(page.get_by_role("status")).to_have_text("User created.")
    row = page.locator("#users tbody tr", has_text=email)
    expect(row.get_by_label(f"Role of {name}")).to_have_value("paralegal")
    assert serious_violations(page) == []
    web.screenshot(page, "admin-users")

    newcomer = web.page()
    web.sign_in(newcomer, email, USER_PASSWORD)
    expect(newcomer.locator(".role")).to_have_text("(Paralegal)")
    # Not an administrator: no Administration link, and the page refuses them.
    expect(newcomer.get_by_role("link", name="Administration")).to_have_count(0)
    refused = newcomer.goto("/app/admin/users")
    assert refused is not None and refused.status == 403

    row.get_by_label(f"Role of {name}").select_option("attorney")
    row.get_by_role("button", name=f"Change role of {name}").click()
    expect(page.get_by_role("status")).to_have_text("Saved.")
    row = page.locator("#users tbody tr", has_text=email)
    expect(row.get_by_label(f"Role of {name}")).to_have_value("attorney")
    row.get_by_role("button", name=f"Disable {name}").click()
    expect(page.locator("#users tbody tr", has_text=email)).to_contain_text("Disabled")
    with web.api.admin() as admin:
        listed = admin.get("/users", params={"limit": 100}).json()["data"]
    (found,) = [u for u in listed if u["email"] == email]
    assert (found["role"], found["active"]) == ("attorney", False)
    newcomer.goto("/app")
    expect(newcomer).to_have_url(re.compile(r"/app/sign-in"))

    # The service's rules hold here too: the last active administrator cannot disable themselves
    # (no web test makes another administrator).
    assert [u["email"] for u in listed if u["role"] == "admin" and u["active"]] == [ADMIN_EMAIL]
    me = page.locator("#users tbody tr", has_text=ADMIN_EMAIL)
    me.get_by_role("button", name=re.compile(r"^Disable ")).click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Conflict")
    expect(page.get_by_role("alert")).to_contain_text("last active administrator")
