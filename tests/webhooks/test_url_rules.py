"""Webhook URLs are checked strictly when registered; a URL that still cannot be used when a
delivery is attempted makes a failed attempt with its reason; the test endpoint waits as long as
the worker does (the configured time-out)."""

from __future__ import annotations

import httpx
import pytest

from tests.support.assertions import api_error, details, ok
from tests.support.factories import new_case, unique
from tests.support.receivers import receiver_server
from tests.support.servers import Api
from tests.support.waiting import wait_until

SECRET = "s" * 24
UNUSABLE = [
    "http://127.0.0.1:9/x\r\nX-Injected: 1",
    "http://127.0.0.1:9/a\tb",
    "http://127.0.0.1:9/a\x7fb",
    "http://127.0.0.1:9/a\x1bb",
    "http://[::1",
    "http://[::1/x",
    "http://exa mple.com/",
]


def register(admin: httpx.Client, hooks: list[str], url: str, **extra: object) -> dict:
    body = {"name": unique("hook"), "url": url, "events": ["case.created"], "secret": SECRET, **extra}
    hook = ok(admin.post("/admin/webhooks", json=body), 201)
    hooks.append(hook["id"])
    return hook


@pytest.mark.parametrize("url", UNUSABLE)
def test_unusable_urls_are_refused_at_registration_and_update(admin: httpx.Client, hooks, url: str) -> None:
    body = {"name": unique("hook"), "url": url, "events": ["case.created"], "secret": SECRET}
    assert "url" in details(api_error(admin.post("/admin/webhooks", json=body), 422, "VALIDATION_ERROR"))
    hook = register(admin, hooks, "http://127.0.0.1:9/fine")
    r = admin.patch(f"/admin/webhooks/{hook['id']}", json={"url": url})
    assert "url" in details(api_error(r, 422, "VALIDATION_ERROR"))
    assert ok(admin.get(f"/admin/webhooks/{hook['id']}"))["url"] == "http://127.0.0.1:9/fine"


def test_a_url_unusable_at_send_time_is_a_failed_attempt_with_its_reason(
    api: Api, admin: httpx.Client, hooks
) -> None:
    hook = register(admin, hooks, "http://127.0.0.1:9/fine", retry_policy={"max_attempts": 1})
    # Stored before the rule held (or by hand): the attempt fails, it does not break.
    api.sql("UPDATE webhooks SET url = :url WHERE id = :id", url="http://[::1", id=hook["id"])
    result = ok(admin.post(f"/admin/webhooks/{hook['id']}/test", json={"event_type": "case.created"}))
    attempt = result["attempt"]
    assert attempt["success"] is False and attempt["status_code"] is None
    assert "URL" in attempt["error"] and "worker" not in attempt["error"]
    # The worker's own deliveries alike.
    new_case(admin)

    def both_dead() -> list[dict]:
        found = ok(admin.get(f"/admin/webhooks/{hook['id']}/deliveries", params={"status": "dead"}))
        return found if len(found) == 2 else []

    for delivery in wait_until(both_dead):  # the test delivery and the case's
        assert "URL" in delivery["last_error"] and "worker" not in delivery["last_error"]


def test_the_test_endpoint_waits_the_configured_time_out(make_server) -> None:
    server = make_server(webhook_timeout_seconds=10, worker_enabled=False)
    with receiver_server() as slow, server.admin() as admin:
        slow.script = [("hang", 6)]  # longer than httpx's own 5 s default, within the configured 10 s
        hook = ok(
            admin.post(
                "/admin/webhooks",
                json={"name": "slow", "url": slow.url, "events": ["case.created"], "secret": SECRET},
            ),
            201,
        )
        result = ok(admin.post(f"/admin/webhooks/{hook['id']}/test", json={"event_type": "case.created"}))
        assert result["attempt"]["success"] is True, result["attempt"]
