"""The second round's screens in a real browser: the trash with restore, the conflict check page,
and administration (groups, API keys with the key shown once, webhooks with a test delivery and
the dead letters with "Retry", configuration). Each change is checked through the API too."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.support.receivers import Receiver
from tests.support.servers import free_port
from tests.support.waiting import wait_until
from tests.web.conftest import USER_PASSWORD, Web


def _admin_page(web: Web) -> Page:
    page = web.page()
    web.sign_in(page)
    return page


def _csrf(page: Page) -> str:
    return page.locator("input[name=csrf_token]").first.input_value()


def test_restore_a_matter_and_a_document_from_the_trash(web: Web) -> None:
    with web.api.admin() as admin:
        case = admin.post("/cases", json={"title": "Binned matter: Halvorsen estate"}).json()["data"]
        other = admin.post("/cases", json={"title": "Kept matter: Ruiz lease"}).json()["data"]
        document = admin.post(
            f"/cases/{other['id']}/documents", files={"file": ("ruiz-draft.txt", b"draft", "text/plain")}
        ).json()["data"]
        assert admin.delete(f"/cases/{case['id']}").status_code == 200
        assert admin.delete(f"/documents/{document['id']}").status_code == 200
    page = _admin_page(web)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Trash").click()
    expect(page.get_by_role("heading", name="Trash", level=1)).to_be_visible()
    rows = page.locator("#trash tbody tr")
    expect(rows.filter(has_text="Binned matter: Halvorsen estate")).to_contain_text("Matter")
    # A document shows its matter's title beside its own.
    expect(rows.filter(has_text="ruiz-draft.txt")).to_contain_text("Kept matter: Ruiz lease")
    web.screenshot(page, "trash")

    page.get_by_role("button", name="Restore Binned matter: Halvorsen estate").click()
    expect(page.get_by_role("status")).to_contain_text("Matter restored")
    expect(rows.filter(has_text="Binned matter: Halvorsen estate")).to_have_count(0)
    page.get_by_role("button", name="Restore ruiz-draft.txt").click()
    expect(page.get_by_role("status")).to_contain_text("Document restored")
    page.get_by_role("link", name="open it").click()
    expect(page.get_by_role("heading", name="ruiz-draft.txt", level=2)).to_be_visible()
    with web.api.admin() as admin:
        assert admin.get(f"/cases/{case['id']}").status_code == 200
        assert admin.get(f"/documents/{document['id']}").status_code == 200

    # Not for others: the trash is the administrators' (as `/admin/trash`), and a form without
    # its CSRF token is refused.
    _, email = web.user("attorney")
    attorney = web.page()
    web.sign_in(attorney, email, USER_PASSWORD)
    expect(attorney.get_by_role("link", name="Trash")).to_have_count(0)
    response = attorney.goto("/app/trash")
    assert response is not None and response.status == 403
    with web.api.admin() as admin:
        assert admin.delete(f"/cases/{case['id']}").status_code == 200
    refused = page.request.post(f"/app/trash/{case['id']}/restore", form={})
    assert refused.status == 403 and "did not come from this site" in refused.text()
    with web.api.admin() as admin:
        assert admin.get(f"/cases/{case['id']}").status_code == 404


def test_conflict_check_page(web: Web) -> None:
    with web.api.admin() as admin:
        admin.post("/cases", json={"title": "Initech: payroll audit", "client_name": "Initech Systems AG"})
    _, email = web.user("attorney")
    page = web.page()
    web.sign_in(page, email, USER_PASSWORD)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Conflict check").click()
    expect(page.get_by_role("heading", name="Conflict check", level=1)).to_be_visible()
    expect(page.get_by_text("No conflict checks yet.")).to_be_visible()
    page.get_by_label("Names").fill("Initech Systems\nNobody Anywhere Ltd")
    page.get_by_role("button", name="Check for conflicts").click()
    expect(page.locator(".warning")).to_contain_text("Possible conflicts")
    expect(page.locator(".hits")).to_contain_text("Initech: payroll audit")
    expect(page.locator("#recent-checks")).to_contain_text("Initech Systems, Nobody Anywhere Ltd")
    web.screenshot(page, "conflicts")
    with web.api.client(token=web.api.login(email, USER_PASSWORD)["token"]) as mine:
        checks = mine.get("/conflict-checks").json()["data"]
    assert checks[0]["names"] == ["Initech Systems", "Nobody Anywhere Ltd"]


def test_create_an_api_key_and_see_it_once(web: Web) -> None:
    page = _admin_page(web)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Administration").click()
    page.get_by_role("navigation", name="Administration").get_by_role("link", name="API keys").click()
    page.get_by_text("Create a key").click()
    page.get_by_label("Name").fill("Billing export")
    page.get_by_label("Expires on").fill("2099-12-31")
    page.get_by_role("button", name="Create key").click()
    expect(page.locator("#new-key")).to_contain_text("shown this once")
    key = page.locator("#token").inner_text()
    web.screenshot(page, "admin-api-keys")
    with web.api.client(api_key=key) as client:
        assert client.get("/cases").status_code == 200
        assert client.post("/cases", json={"title": "x"}).status_code == 403  # read permissions only
    # Never again: not on the list, not after a reload.
    page.goto("/app/admin/api-keys")
    expect(page.locator("#keys")).to_contain_text("Billing export")
    assert key not in page.content()
    row = page.locator("#keys tr", has_text="Billing export")
    expect(row).to_contain_text("2099-12-31")
    row.get_by_role("button", name="Revoke Billing export").click()
    expect(page.get_by_role("status")).to_contain_text("Key revoked")
    with web.api.client(api_key=key) as client:
        assert client.get("/cases").status_code == 401
    # Without the CSRF token, nothing is created.
    refused = page.request.post("/app/admin/api-keys", form={"name": "Forged", "permission": "read:cases"})
    assert refused.status == 403
    with web.api.admin() as admin:
        assert "Forged" not in [k["name"] for k in admin.get("/admin/api-keys").json()["data"]]


def test_create_a_webhook_send_a_test_and_retry_a_dead_letter(web: Web, receiver: Receiver) -> None:
    page = _admin_page(web)
    page.goto("/app/admin/webhooks")
    page.get_by_text("Create a webhook").click()
    page.get_by_label("Name").fill("Docketing system")
    page.get_by_label("URL").fill(receiver.url)
    page.get_by_label("Events").fill("case.*\ndocument.uploaded")
    page.get_by_role("button", name="Create webhook").click()
    secret = page.locator("#new-secret .token").inner_text()
    assert len(secret) >= 32
    page.get_by_role("link", name="Docketing system").click()
    expect(page.get_by_text("Nothing sent to this webhook yet.")).to_be_visible()
    page.get_by_label("Event to send").select_option("case.created")
    page.get_by_role("button", name="Send a test").click()
    expect(page.locator("#test-outcome")).to_have_text("Test delivered (HTTP 200).")
    [received] = receiver.wait_for(1)
    assert received.json()["event"] == "case.created"
    expect(page.locator("#deliveries")).to_contain_text("Delivered")
    expect(page.locator("#deliveries")).to_contain_text("Test")
    web.screenshot(page, "admin-webhook")

    # A webhook whose receiver is gone, one attempt only: its delivery dies, and "Retry" sends it again.
    dead_url = f"http://127.0.0.1:{free_port()}/gone"
    with web.api.admin() as admin:
        hook = admin.post(
            "/admin/webhooks",
            json={
                "name": "Gone receiver",
                "url": dead_url,
                "events": ["case.created"],
                "secret": "s" * 24,
                "retry_policy": {"max_attempts": 1},
            },
        ).json()["data"]
        admin.post("/cases", json={"title": "Triggers a dead letter"})

        def dead() -> list[dict[str, str]]:
            found = admin.get("/admin/deliveries", params={"status": "dead"}).json()["data"]
            return [d for d in found if d["webhook_id"] == hook["id"]]

        [letter] = wait_until(dead, timeout=30)
    page.get_by_role("navigation", name="Administration").get_by_role("link", name="Dead letters").click()
    expect(page.get_by_role("heading", name="Dead letters", level=1)).to_be_visible()
    row = page.locator("#deliveries tr", has_text="Gone receiver")
    expect(row).to_contain_text("Dead")
    web.screenshot(page, "admin-dead-letters")
    row.get_by_role("button", name="Retry case.created delivery").first.click()
    expect(page.get_by_role("status")).to_contain_text("Sent again")
    with web.api.admin() as admin:
        wait_until(
            lambda: admin.get(f"/admin/deliveries/{letter['id']}").json()["data"]["attempt_count"] == 2,
            timeout=30,
        )
        assert admin.delete(f"/admin/webhooks/{hook['id']}").status_code == 200


def test_groups_and_configuration(web: Web) -> None:
    member, _ = web.user("paralegal")
    page = _admin_page(web)
    page.goto("/app/admin/groups")
    page.get_by_label("Name").fill("Litigation team")
    page.get_by_label("Description").fill("Everyone on the trial side")
    page.get_by_role("button", name="Create group").click()
    expect(page.get_by_role("status")).to_contain_text("Group created")
    page.get_by_label(re.compile(re.escape(member["email"]))).check()
    page.get_by_role("button", name="Save group").click()
    expect(page.get_by_role("status")).to_have_text("Saved.")
    page.goto("/app/admin/groups")
    expect(page.locator("#groups tr", has_text="Litigation team")).to_contain_text("Test paralegal")
    web.screenshot(page, "admin-groups")
    with web.api.admin() as admin:
        groups = admin.get("/admin/groups").json()["data"]
        group = next(g for g in groups if g["name"] == "Litigation team")
        assert group["member_ids"] == [member["id"]]
        before = admin.get("/admin/config").json()["data"]

    page.goto("/app/admin/config")
    page.get_by_label("Days before deleted items are purged").fill("45")
    page.get_by_role("button", name="Save configuration").click()
    expect(page.get_by_role("status")).to_contain_text("Saved")
    web.screenshot(page, "admin-config")
    with web.api.admin() as admin:
        after = admin.get("/admin/config").json()["data"]
        assert after["retention"]["trash_days"] == 45
        assert {k: v for k, v in after.items() if k not in ("retention", "updated_at", "updated_by")} == {
            k: v for k, v in before.items() if k not in ("retention", "updated_at", "updated_by")
        }
        # Only the field changed was sent (the others still follow the server's defaults).
        [entry] = admin.get("/admin/audit", params={"action": "config.updated"}).json()["data"][:1]
        assert entry["details"]["changes"] == {"retention": {"trash_days": 45}}
        admin.patch("/admin/config", json={"retention": None})
    # Saving unchanged changes nothing; a value the API refuses is its 422, shown as a page.
    page.goto("/app/admin/config")
    page.get_by_role("button", name="Save configuration").click()
    expect(page.get_by_role("status")).to_have_text("Nothing changed.")
    response = page.request.post(
        "/app/admin/config",
        form={
            "csrf_token": _csrf(page),
            "max_size_bytes": "1",
            "trash_days": "0",
            "max_attempts": "3",
            "initial_delay": "60",
            "backoff_multiplier": "2",
            "allowed_type": "text/plain",
        },
    )
    assert response.status == 422 and "trash_days" in response.text()
