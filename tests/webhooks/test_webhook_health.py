"""Webhooks that heal and warn (issue 27, item 2): the circuit (failing, then disabled, with events
to the other endpoints), 410, Retry-After, re-enabling by a successful test, and the filters by
matter; on both databases, with the server's own worker and real receivers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx

from casefile.webhooks.circuit import GONE_REASON
from casefile.webhooks.delivery import parse_retry_after
from tests.support.assertions import api_error, ok
from tests.support.factories import new_case, unique
from tests.support.receivers import Receiver, receiver_server
from tests.support.waiting import wait_until

SECRET = "whsec_health_0123456789abcdef"
QUICK = {"max_attempts": 5, "initial_delay": 1, "backoff_multiplier": 1}


def register(admin: httpx.Client, url: str, events: list[str], **extra: object) -> dict:
    body = {"name": unique("hook"), "url": url, "events": events, "secret": SECRET, "retry_policy": QUICK}
    return ok(admin.post("/admin/webhooks", json={**body, **extra}), 201)


def webhook(admin: httpx.Client, hook_id: str) -> dict:
    return ok(admin.get(f"/admin/webhooks/{hook_id}"))


def events_of(receiver: Receiver, name: str) -> list[dict]:
    return [r.json() for r in receiver.received(name)]


def test_a_failing_endpoint_warns_then_is_disabled_and_a_test_enables_it(make_server, receiver) -> None:
    api = make_server(webhook_disable_after_failures=3)
    with api.admin() as admin, receiver_server() as watcher:
        watching = register(admin, watcher.url, ["webhook.*"])
        receiver.script = [500]
        failing = register(admin, receiver.url, ["case.*", "webhook.*"])
        ok(admin.post("/cases", json={"title": "Failing"}), 201)
        disabled = wait_until(lambda: events_of(watcher, "webhook.disabled"), timeout=30)
        hook = webhook(admin, failing["id"])
        assert hook["active"] is False
        assert hook["disabled_reason"] == "3 attempts in a row failed"
        assert hook["consecutive_failures"] == 3 and hook["failing_since"] is not None
        # One warning at the first failure (the next ones come after 1 h and 12 h), then the end.
        [warning] = events_of(watcher, "webhook.failing")
        assert warning["data"]["webhook_id"] == failing["id"]
        assert warning["data"]["last_status_code"] == 500
        assert disabled[0]["data"]["reason"] == "3 attempts in a row failed"
        assert disabled[0]["data"]["consecutive_failures"] == 3
        # The failing endpoint, subscribed to webhook.* too, was never sent the news about itself.
        assert {r.json()["event"] for r in receiver.received()} == {"case.created"}
        assert len(receiver.received()) == 3
        # The watcher is healthy: nothing of its own is shown as failing.
        assert webhook(admin, watching["id"])["failing_since"] is None
        # Enabling it by hand is refused while the receiver has not shown it works.
        refused = api_error(
            admin.patch(f"/admin/webhooks/{failing['id']}", json={"active": True}), 409, "CONFLICT"
        )
        assert "successful test" in refused["message"]
        failed_test = ok(
            admin.post(f"/admin/webhooks/{failing['id']}/test", json={"event_type": "case.created"})
        )
        assert failed_test["attempt"]["status_code"] == 500
        assert webhook(admin, failing["id"])["active"] is False
        receiver.script = [200]
        passed = ok(admin.post(f"/admin/webhooks/{failing['id']}/test", json={"event_type": "case.created"}))
        assert passed["attempt"]["success"] is True
        hook = webhook(admin, failing["id"])
        assert (hook["active"], hook["disabled_reason"], hook["failing_since"]) == (True, None, None)
        # The delivery that waited while it was disabled goes out now.
        wait_until(
            lambda: ok(
                admin.get(f"/admin/webhooks/{failing['id']}/deliveries", params={"status": "succeeded"})
            ),
            timeout=30,
        )


def test_410_gone_disables_at_once(make_server, receiver) -> None:
    api = make_server()
    with api.admin() as admin:
        receiver.script = [410]
        hook = register(admin, receiver.url, ["case.created"])
        new_case(admin)
        wait_until(lambda: webhook(admin, hook["id"])["active"] is False, timeout=20)
        assert webhook(admin, hook["id"])["disabled_reason"] == GONE_REASON
        assert len(receiver.received()) == 1


def test_retry_after_is_a_delay_not_a_try(make_server, receiver) -> None:
    api = make_server()
    with api.admin() as admin:
        receiver.script = [("retry-after", 429, "1"), ("retry-after", 503, "1"), 200]
        hook = register(admin, receiver.url, ["case.created"], retry_policy={**QUICK, "max_attempts": 1})
        new_case(admin)
        done = wait_until(
            lambda: ok(admin.get(f"/admin/webhooks/{hook['id']}/deliveries", params={"status": "succeeded"})),
            timeout=20,
        )
        delivery = ok(admin.get(f"/admin/deliveries/{done[0]['id']}"))
        # One try allowed, three attempts made: the two the receiver deferred did not count.
        assert [a["status_code"] for a in delivery["attempts"]] == [429, 503, 200]
        assert delivery["max_attempts"] == 3
        times = [r.at for r in receiver.received()]
        assert times[1] - times[0] >= 0.9 and times[2] - times[1] >= 0.9
        assert webhook(admin, hook["id"])["failing_since"] is None


def test_retry_after_values() -> None:
    assert parse_retry_after("120") == 120
    later = datetime.now(UTC) + timedelta(seconds=90)
    assert 85 <= (parse_retry_after(format_datetime(later, usegmt=True)) or 0) <= 91
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None
    assert parse_retry_after("999999999") == 86_400  # at most the delivery deadline


def test_subscriptions_filtered_by_matter_and_matter_type(make_server) -> None:
    api = make_server()
    with api.admin() as admin, receiver_server() as by_type, receiver_server() as by_case:
        watched = new_case(admin, title="Watched matter")
        typed = register(admin, by_type.url, ["case.*"], case_types=["Litigation"])
        assert typed["case_types"] == ["Litigation"] and typed["case_ids"] is None
        register(admin, by_case.url, ["case.*", "user.login"], case_ids=[watched["id"]])
        litigation = ok(admin.post("/cases", json={"title": "Lit", "case_type": "litigation"}), 201)
        ok(admin.post("/cases", json={"title": "Other", "case_type": "probate"}), 201)
        ok(admin.patch(f"/cases/{watched['id']}", json={"title": "Watched matter, renamed"}))
        api.login()  # a user.login: about no matter
        wait_until(lambda: by_type.received() and by_case.received(), timeout=20)
        ok(admin.patch(f"/cases/{litigation['id']}", json={"title": "Lit, renamed"}))
        wait_until(lambda: len(by_type.received()) >= 2, timeout=20)
        assert [(r.json()["event"], r.json()["data"]["case_id"]) for r in by_type.received()] == [
            ("case.created", litigation["id"]),
            ("case.updated", litigation["id"]),
        ]
        assert [(r.json()["event"], r.json()["data"]["case_id"]) for r in by_case.received()] == [
            ("case.updated", watched["id"])
        ]


def test_recovery_after_an_outage_requeues_the_window_as_a_job(make_server, receiver) -> None:
    api = make_server()
    with api.admin() as admin:
        receiver.script = [500]  # the outage
        hook = register(admin, receiver.url, ["case.created"], retry_policy={**QUICK, "max_attempts": 1})
        since = datetime.now(UTC)
        for i in range(3):
            ok(admin.post("/cases", json={"title": f"During the outage {i}"}), 201)

        def dead() -> list[dict]:
            return ok(admin.get(f"/admin/webhooks/{hook['id']}/deliveries", params={"status": "dead"}))

        wait_until(lambda: len(dead()) == 3, timeout=20)
        until = datetime.now(UTC)
        ok(admin.post("/cases", json={"title": "After the window"}), 201)
        wait_until(lambda: len(dead()) == 4, timeout=20)
        receiver.script = [200]  # the receiver is back
        window = {"since": since.isoformat(), "until": until.isoformat()}
        response = admin.post(f"/admin/webhooks/{hook['id']}/recover", json=window)
        job = ok(response, 202)
        assert job["job_id"] == job["id"] and job["total"] == 3
        assert response.headers["location"].endswith(f"/admin/webhook-recoveries/{job['id']}")
        done = wait_until(
            lambda: (
                (j := ok(admin.get(f"/admin/webhook-recoveries/{job['id']}")))["status"] == "completed" and j
            ),
            timeout=20,
        )
        assert (done["requeued"], done["total"]) == (3, 3)
        succeeded = wait_until(
            lambda: (
                (
                    found := ok(
                        admin.get(f"/admin/webhooks/{hook['id']}/deliveries", params={"status": "succeeded"})
                    )
                )
                and len(found) == 3
                and found
            ),
            timeout=20,
        )
        assert len(succeeded) == 3
        [left] = dead()  # the one made after the window stays in the dead letters
        assert left["id"] not in {d["id"] for d in succeeded}
        backwards = {"since": until.isoformat(), "until": since.isoformat()}
        api_error(
            admin.post(f"/admin/webhooks/{hook['id']}/recover", json=backwards), 422, "VALIDATION_ERROR"
        )


def test_warnings_after_one_and_twelve_hours_then_disabled_after_a_day(make_server, receiver) -> None:
    """The circuit's clock, moved back in the database (as if the receiver had failed that long)."""
    api = make_server()
    with api.admin() as admin, receiver_server() as watcher:
        register(admin, watcher.url, ["webhook.*"])
        receiver.script = [500]
        retrying = {"max_attempts": 10, "initial_delay": 2, "backoff_multiplier": 1}
        hook = register(admin, receiver.url, ["case.created"], retry_policy=retrying)
        ok(admin.post("/cases", json={"title": "Failing for a day"}), 201)
        wait_until(lambda: len(events_of(watcher, "webhook.failing")) == 1, timeout=20)

        def failing_for(hours: float) -> None:
            since = (datetime.now(UTC) - timedelta(hours=hours)).replace(tzinfo=None)
            api.sql("UPDATE webhooks SET failing_since = :s WHERE id = :w", s=since, w=hook["id"])

        failing_for(1.5)
        wait_until(lambda: len(events_of(watcher, "webhook.failing")) == 2, timeout=20)
        failing_for(13)
        wait_until(lambda: len(events_of(watcher, "webhook.failing")) == 3, timeout=20)
        failing_for(25)
        [disabled] = wait_until(lambda: events_of(watcher, "webhook.disabled"), timeout=20)
        assert disabled["data"]["reason"].startswith("Every attempt failed since ")
        assert webhook(admin, hook["id"])["active"] is False
        assert len(events_of(watcher, "webhook.failing")) == 3  # no more warnings once disabled
