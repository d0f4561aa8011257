"""Webhook registrations, signed deliveries, retries, dead letters, rotation and the SSRF guard."""

from __future__ import annotations

import asyncio
import ipaddress
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import httpcore
import httpx
import pytest

from casefile.secretbox import SecretBox
from casefile.webhooks import SignatureError, verify_signature
from casefile.webhooks.signing import signature_headers
from casefile.webhooks.ssrf import GuardedBackend, is_forbidden
from tests.support.assertions import api_error, details, ok
from tests.support.factories import new_case, unique
from tests.support.receivers import receiver_server
from tests.support.servers import Api, running_server
from tests.support.waiting import wait_until

SECRET = "whsec_test_0123456789abcdef"


def register(admin: httpx.Client, hooks: list[str], url: str, events: list[str], **extra) -> dict:
    hook = ok(
        admin.post(
            "/admin/webhooks",
            json={"name": unique("hook"), "url": url, "events": events, "secret": SECRET, **extra},
        ),
        201,
    )
    hooks.append(hook["id"])
    return hook


def delivery_of(admin: httpx.Client, hook_id: str, status: str | None = None) -> dict:
    params = {"status": status} if status else {}
    found = wait_until(lambda: ok(admin.get(f"/admin/webhooks/{hook_id}/deliveries", params=params)))
    return ok(admin.get(f"/admin/deliveries/{found[0]['id']}"))


def test_registration_crud_and_secret_stays_secret(api: Api, admin: httpx.Client, hooks, receiver) -> None:
    hook = register(admin, hooks, receiver.url, ["case.*", "user.login"], retry_policy={"max_attempts": 3})
    assert set(hook) == {
        *("id", "name", "url", "events", "active", "retry_policy", "case_ids", "case_types"),
        *("failing_since", "consecutive_failures", "disabled_reason", "created_at", "updated_at"),
    }
    assert hook["retry_policy"] == {"max_attempts": 3, "backoff_multiplier": 2.0, "initial_delay": 60}
    [(sealed,)] = api.sql("SELECT secret_sealed FROM webhooks WHERE id = :id", id=hook["id"])
    assert SECRET not in sealed and SECRET not in repr(api.sql("SELECT * FROM webhooks"))
    upd = ok(admin.patch(f"/admin/webhooks/{hook['id']}", json={"retry_policy": {"initial_delay": 5}}))
    assert upd["retry_policy"] == {"max_attempts": 3, "backoff_multiplier": 2.0, "initial_delay": 5}
    r = admin.patch(f"/admin/webhooks/{hook['id']}", json={"retry_policy": {"max_attempts": 11}})
    assert "retry_policy.max_attempts" in details(api_error(r, 422, "VALIDATION_ERROR"))
    api_error(admin.patch(f"/admin/webhooks/{hook['id']}", json={"url": None}), 422, "VALIDATION_ERROR")
    listed = ok(admin.get("/admin/webhooks", params={"limit": 100}))
    assert hook["id"] in {h["id"] for h in listed} and all("secret" not in h for h in listed)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"events": ["case.exploded"]}, "events"),
        ({"events": ["planet.*"]}, "events"),
        ({"events": []}, "events"),
        ({"secret": "short"}, "secret"),
        ({"retry_policy": {"max_attempts": 0}}, "retry_policy.max_attempts"),
        ({"retry_policy": {"backoff_multiplier": 0.5}}, "retry_policy.backoff_multiplier"),
        ({"retry_policy": {"initial_delay": 3601}}, "retry_policy.initial_delay"),
        ({"url": "ftp://example.com/hook"}, "url"),
        ({"url": "https://user:pw@example.com/hook"}, "url"),
    ],
)
def test_registration_validation(admin: httpx.Client, receiver, change: dict, field: str) -> None:
    body = {"name": "x", "url": receiver.url, "events": ["case.created"], "secret": SECRET, **change}
    assert field in details(api_error(admin.post("/admin/webhooks", json=body), 422, "VALIDATION_ERROR"))


def test_delivery_is_signed_and_shaped_per_contract(api: Api, admin: httpx.Client, hooks) -> None:
    with receiver_server() as first, receiver_server() as second:
        hook_a = register(admin, hooks, first.url, ["case.created"])
        hook_b = register(admin, hooks, second.url, ["*"])
        case = new_case(admin)
        got_a = first.wait_for(event="case.created")[0]
        got_b = wait_until(
            lambda: [r for r in second.received("case.created") if r.json()["data"]["case_id"] == case["id"]]
        )[0]
    assert verify_signature(got_a.body, got_a.headers, SECRET) == int(got_a.headers["x-service-timestamp"])
    assert got_a.headers["content-type"] == "application/json"
    assert got_a.headers["user-agent"].startswith("casefile-webhooks/")
    a, b = got_a.json(), got_b.json()
    assert a["id"] == b["id"] and a["id"].startswith("webhook_")  # one event, one id
    assert a["metadata"]["delivery_id"] != b["metadata"]["delivery_id"]
    assert a["metadata"] == {
        "webhook_id": hook_a["id"],
        "attempt": 1,
        "delivery_id": a["metadata"]["delivery_id"],
    }
    assert b["metadata"]["webhook_id"] == hook_b["id"]
    [event] = api.events("case.created", case_id=case["id"])
    assert a["data"] == event and a["event"] == "case.created"


def test_verify_signature_helper() -> None:
    body = b'{"event":"case.created"}'
    headers = signature_headers(body, [SECRET])
    assert verify_signature(body, headers, SECRET)
    assert verify_signature(body, {k.upper(): v for k, v in headers.items()}, ["other-secret-xxxxxx", SECRET])
    for bad_body, bad_headers, secret, now in [
        (body + b" ", headers, SECRET, None),
        (body, headers, "wrong-secret-0123456789", None),
        (body, headers, SECRET, time.time() + 301),
        (body, {"X-Service-Signature": "garbage"}, SECRET, None),
        (body, {}, SECRET, None),
        (body, {**headers, "X-Service-Timestamp": "1"}, SECRET, None),
    ]:
        with pytest.raises(SignatureError):
            verify_signature(bad_body, bad_headers, secret, now=now)


def test_rotation_signs_with_both_secrets_during_the_grace_period(
    admin: httpx.Client, hooks, receiver
) -> None:
    hook = register(admin, hooks, receiver.url, ["case.created"])
    rotated = ok(admin.post(f"/admin/webhooks/{hook['id']}/rotate-secret", json={}))
    new_secret = rotated.pop("secret")
    assert new_secret.startswith("whsec_") and "secret" not in ok(admin.get(f"/admin/webhooks/{hook['id']}"))
    new_case(admin)
    got = receiver.wait_for(event="case.created")[0]
    assert got.headers["x-service-signature"].count("v1=") == 2
    assert verify_signature(got.body, got.headers, SECRET) and verify_signature(
        got.body, got.headers, new_secret
    )
    third = "whsec_third_secret_0123456789"
    done = ok(
        admin.post(
            f"/admin/webhooks/{hook['id']}/rotate-secret", json={"secret": third, "grace_period_seconds": 0}
        )
    )
    assert "secret" not in done
    new_case(admin)
    latest = receiver.wait_for(count=2, event="case.created")[1]
    # `third` signs; the secret it replaced with no grace does not; the first keeps its own grace.
    assert latest.headers["x-service-signature"].count("v1=") == 2
    assert verify_signature(latest.body, latest.headers, third)
    assert verify_signature(latest.body, latest.headers, SECRET)
    with pytest.raises(SignatureError):
        verify_signature(latest.body, latest.headers, new_secret)


def test_failures_are_retried_and_every_attempt_recorded(admin: httpx.Client, hooks, receiver) -> None:
    receiver.script = [500, ("body", 100_000), 200]
    hook = register(
        admin,
        hooks,
        receiver.url,
        ["case.created"],
        retry_policy={"max_attempts": 5, "initial_delay": 1, "backoff_multiplier": 1},
    )
    new_case(admin)
    receiver.wait_for(count=2, timeout=20)
    delivery = wait_until(
        lambda: (d := delivery_of(admin, hook["id"]))["status"] == "succeeded" and d, timeout=20
    )
    first, second = delivery["attempts"]
    assert (first["number"], first["status_code"], first["success"]) == (1, 500, False)
    assert (
        first["error"] == "HTTP 500"
        and first["duration_ms"] >= 0
        and first["response_body"] == '{"ok": true}'
    )
    assert (second["number"], second["status_code"], second["success"]) == (2, 200, True)
    assert len(second["response_body"]) == 1024  # only the first KiB is kept
    gap = receiver.requests[1].at - receiver.requests[0].at
    assert 0.7 < gap < 3.5  # initial_delay 1 s, ±20 % jitter, plus at most one poll


def test_redirects_are_failures_not_followed(admin: httpx.Client, hooks) -> None:
    with receiver_server() as target, receiver_server() as redirecting:
        redirecting.script = [("redirect", target.url)]
        hook = register(admin, hooks, redirecting.url, ["case.created"], retry_policy={"max_attempts": 1})
        new_case(admin)
        delivery = wait_until(lambda: (d := delivery_of(admin, hook["id"]))["status"] == "dead" and d)
        assert delivery["attempts"][0]["status_code"] == 307
        assert delivery["attempts"][0]["error"] == "Redirects are not followed"
        assert target.received() == []


def test_dead_letters_and_replay_with_a_fresh_budget(admin: httpx.Client, hooks, receiver) -> None:
    receiver.script = [503, 503, 200]
    hook = register(
        admin,
        hooks,
        receiver.url,
        ["case.created"],
        retry_policy={"max_attempts": 2, "initial_delay": 1, "backoff_multiplier": 1},
    )
    new_case(admin)
    dead = wait_until(lambda: (d := delivery_of(admin, hook["id"]))["status"] == "dead" and d, timeout=20)
    assert [a["status_code"] for a in dead["attempts"]] == [503, 503]
    assert dead["id"] in {
        d["id"] for d in ok(admin.get("/admin/deliveries", params={"status": "dead", "limit": 100}))
    }
    ok(admin.post(f"/admin/deliveries/{dead['id']}/retry"))
    done = wait_until(
        lambda: (d := delivery_of(admin, hook["id"]))["status"] == "succeeded" and d, timeout=20
    )
    assert [a["number"] for a in done["attempts"]] == [1, 2, 3]
    assert receiver.requests[2].json()["metadata"]["attempt"] == 3
    api_error(admin.post(f"/admin/deliveries/{dead['id']}/retry"), 409, "CONFLICT")  # already succeeded


def test_inactive_webhook_gets_nothing_until_reactivated(
    api: Api, admin: httpx.Client, hooks, receiver
) -> None:
    hook = register(admin, hooks, receiver.url, ["case.*"], active=False)
    new_case(admin)
    assert api.sql("SELECT count(*) FROM deliveries WHERE webhook_id = :id", id=hook["id"])[0][0] == 0
    receiver.script = [("hang", 0.5), 200]
    ok(admin.patch(f"/admin/webhooks/{hook['id']}", json={"active": True}))
    case = new_case(admin)
    receiver.wait_for(event="case.created")
    ok(admin.patch(f"/admin/webhooks/{hook['id']}", json={"active": False}))
    ok(admin.patch(f"/cases/{case['id']}", json={"priority": "low"}))  # emitted while inactive: nothing
    time.sleep(1.5)
    assert receiver.received("case.updated") == []
    assert api.sql("SELECT count(*) FROM deliveries WHERE webhook_id = :id", id=hook["id"])[0][0] == 1


def test_test_endpoint_works_on_inactive_hooks_and_reports_the_outcome(
    admin: httpx.Client, hooks, receiver
) -> None:
    hook = register(admin, hooks, receiver.url, ["case.created"], active=False)
    result = ok(
        admin.post(
            f"/admin/webhooks/{hook['id']}/test",
            json={"event_type": "document.uploaded", "test_data": {"document_id": "doc_x"}},
        )
    )
    assert result["attempt"]["success"] is True and result["attempt"]["status_code"] == 200
    assert result["delivery"]["status"] == "succeeded" and result["delivery"]["test"] is True
    got = receiver.received()[0].json()
    assert got["event"] == "document.uploaded" and got["data"] == {"document_id": "doc_x"}
    assert got["metadata"]["test"] is True
    r = admin.post(f"/admin/webhooks/{hook['id']}/test", json={"event_type": "nope", "test_data": {}})
    assert "event_type" in details(api_error(r, 422, "VALIDATION_ERROR"))


def test_hanging_receiver_is_cut_off_and_holds_back_no_one(admin: httpx.Client, hooks) -> None:
    with receiver_server() as slow, receiver_server() as fast:
        slow.script = [("hang", 10)]
        slow_hook = register(admin, hooks, slow.url, ["case.created"], retry_policy={"max_attempts": 1})
        register(admin, hooks, fast.url, ["case.created"])
        for _ in range(10):  # more than the per-webhook limit of the slow receiver
            new_case(admin)
        fast.wait_for(count=10, timeout=5)  # not held back by the slow one
        timeout = 3  # the test server's CASEFILE_WEBHOOK_TIMEOUT_SECONDS
        delivery = wait_until(
            lambda: (d := delivery_of(admin, slow_hook["id"]))["status"] == "dead" and d, timeout=20
        )
        attempt = delivery["attempts"][0]
        assert (
            attempt["error"] == f"No complete response within {timeout} s" and attempt["status_code"] is None
        )
        assert timeout * 1000 <= attempt["duration_ms"] < timeout * 1000 + 1500


def test_deleting_a_webhook_deletes_its_deliveries(api: Api, admin: httpx.Client, receiver) -> None:
    hook = ok(
        admin.post(
            "/admin/webhooks", json={"name": "gone", "url": receiver.url, "events": ["*"], "secret": SECRET}
        ),
        201,
    )
    new_case(admin)
    receiver.wait_for()
    ok(admin.delete(f"/admin/webhooks/{hook['id']}"))
    assert api.sql("SELECT count(*) FROM deliveries WHERE webhook_id = :id", id=hook["id"])[0][0] == 0
    api_error(admin.get(f"/admin/webhooks/{hook['id']}/deliveries"), 404, "NOT_FOUND")


# ---------------------------------------------------------------- the SSRF guard


@pytest.fixture(scope="module")
def strict(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    """A server with the production default: no private webhook targets."""
    with running_server(
        backend, tmp_path_factory.mktemp("strict"), webhook_allow_private_urls=False
    ) as server:
        yield server


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "224.0.0.1",
        "240.0.0.1",
        "::1",
        "fe80::1",
        "fc00::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "2002:7f00:1::",
        "64:ff9b::7f00:1",
        "ff02::1",
    ],
)
def test_internal_addresses_are_forbidden(address: str) -> None:
    assert is_forbidden(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111"])
def test_global_addresses_are_allowed(address: str) -> None:
    assert not is_forbidden(ipaddress.ip_address(address))


@pytest.mark.parametrize(
    "url",
    [
        "http://example.com/hook",
        "https://127.0.0.1/hook",
        "https://localhost/hook",
        "https://2130706433/hook",
        "https://0x7f000001/hook",
        "https://0177.0.0.1/hook",
        "https://[::1]/hook",
        "https://[::ffff:127.0.0.1]/hook",
        "https://169.254.169.254/latest/meta-data",
        "https://10.0.0.5:8443/hook",
        "https://no-such-host.invalid/hook",
    ],
)
def test_registration_refuses_internal_targets(strict: Api, url: str) -> None:
    with strict.admin() as admin:
        body = {"name": "x", "url": url, "events": ["*"], "secret": SECRET}
        assert "url" in details(api_error(admin.post("/admin/webhooks", json=body), 422, "VALIDATION_ERROR"))


def test_connections_are_checked_at_connect_time() -> None:
    async def connect(host: str) -> None:
        await GuardedBackend(allow_private=False).connect_tcp(host, 80)

    for host in ("localhost", "127.0.0.1", "2130706433", "::1"):
        with pytest.raises(httpcore.ConnectError, match="may not reach"):
            asyncio.run(connect(host))


def test_a_target_that_turned_internal_is_refused_at_delivery(strict: Api, receiver) -> None:
    """A URL that passed registration but now leads to loopback (say, by DNS rebinding) is refused
    when the worker connects: the receiver gets nothing and the attempt says why."""
    server = strict
    sealed = SecretBox(server.settings.encryption_key).seal(SECRET)
    server.sql(
        "INSERT INTO webhooks (id, name, url, events, active, retry_policy, secret_sealed, previous_secrets, "
        "created_at, updated_at) VALUES ('wh_rebound', 'rebound', :url, '[\"*\"]', true, "
        '\'{"max_attempts": 1, "backoff_multiplier": 2, "initial_delay": 60}\', :sealed, \'[]\', '
        ":now, :now)",
        url=receiver.url,
        sealed=sealed,
        now=datetime.now(UTC).replace(tzinfo=None),
    )
    with server.admin() as admin:
        new_case(admin)
        delivery = wait_until(lambda: (d := delivery_of(admin, "wh_rebound"))["status"] == "dead" and d)
    assert delivery["attempts"][0]["error"].startswith("Refused:")
    assert receiver.received() == []
