"""The private calendar feed: read back with vobject (a parser independent of the `icalendar`
library that writes it), checked line by line against RFC 5545, and revocable."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import httpx
import vobject

from tests.support import plain
from tests.support.assertions import api_error, auth_error, ok
from tests.support.factories import new_case, unique
from tests.support.servers import Api


def _feed_url(client: httpx.Client) -> str:
    r = client.post("/users/me/calendar-token")
    return str(ok(r, 201)["url"])


def test_feed_of_my_open_tasks_and_deadlines(api: Api, admin: httpx.Client) -> None:
    user, token = api.make_user("attorney")
    case = new_case(admin, title=unique("Feed case "))
    title = unique("File reply brief; draft, v2 ")  # ; and , must be escaped in iCalendar text
    dated = ok(
        admin.post(
            f"/cases/{case['id']}/tasks",
            json={
                "title": title,
                "assignee_id": user["id"],
                "due_at": "2027-01-15",
                "reminders": [{"minutes_before": 60}],
            },
        ),
        201,
    )
    timed = ok(
        admin.post(
            f"/cases/{case['id']}/tasks",
            json={
                "title": unique("Call "),
                "assignee_id": user["id"],
                "due_at": "2027-01-20T14:30:00Z",
                "reminders": [{"at": "2027-01-20T08:00:00Z"}],
            },
        ),
        201,
    )
    saved = ok(
        admin.post(
            f"/cases/{case['id']}/deadlines/compute",
            json={
                "rule_set": "frcp",
                "trigger": "service",
                "trigger_date": "2026-12-04",
                "save": True,
                "assignee_id": user["id"],
            },
        )
    )
    answer_task = saved["deadlines"][0]["task_id"]
    # Not in the feed: done, someone else's, no due date.
    ok(
        admin.post(
            f"/cases/{case['id']}/tasks",
            json={"title": "done", "assignee_id": user["id"], "due_at": "2027-01-01", "status": "done"},
        ),
        201,
    )
    ok(admin.post(f"/cases/{case['id']}/tasks", json={"title": "others", "due_at": "2027-01-01"}), 201)
    ok(admin.post(f"/cases/{case['id']}/tasks", json={"title": "undated", "assignee_id": user["id"]}), 201)

    with api.client(token=token) as client:
        url = _feed_url(client)
    assert url.startswith(api.base + "/calendar/") and url.endswith(".ics")
    response = plain.get(url)  # no credentials
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/calendar")

    # RFC 5545 by hand: CRLF line ends, lines of at most 75 octets, the required properties.
    raw = response.content
    assert raw.startswith(b"BEGIN:VCALENDAR\r\n") and raw.endswith(b"END:VCALENDAR\r\n")
    assert b"\n" not in raw.replace(b"\r\n", b"")
    assert all(len(line) <= 75 for line in raw.split(b"\r\n"))
    unfolded = response.text.replace("\r\n ", "")
    assert "VERSION:2.0" in unfolded and "PRODID:-//Casefile//Tasks and deadlines//EN" in unfolded
    escaped = title.replace(";", "\\;").replace(",", "\\,")
    assert f"SUMMARY:{escaped}" in unfolded

    # Read back with vobject.
    calendar = vobject.readOne(response.text)
    events = {e.uid.value: e for e in calendar.vevent_list}
    assert set(events) == {f"{dated['id']}@casefile", f"{timed['id']}@casefile", f"{answer_task}@casefile"}
    day = events[f"{dated['id']}@casefile"]
    assert day.summary.value == title
    assert day.dtstart.value == date(2027, 1, 15) and day.dtend.value == date(2027, 1, 16)  # all day
    assert day.valarm.trigger.value == timedelta(minutes=-60)
    assert case["case_number"] in day.description.value
    at = events[f"{timed['id']}@casefile"]
    assert at.dtstart.value == datetime(2027, 1, 20, 14, 30, tzinfo=UTC)
    assert not hasattr(at, "dtend")  # RFC 5545: DTEND must be later than DTSTART; none = a moment
    assert at.valarm.trigger.value == datetime(2027, 1, 20, 8, 0, tzinfo=UTC)
    deadline = events[f"{answer_task}@casefile"]
    assert (
        deadline.dtstart.value == date(2026, 12, 28) and deadline.summary.value == "Answer to the complaint"
    )
    assert deadline.categories.value == ["Deadline"]

    # Done tasks leave the feed.
    ok(admin.patch(f"/tasks/{dated['id']}", json={"status": "done"}))
    uids = {e.uid.value for e in vobject.readOne(plain.get(url).text).vevent_list}
    assert f"{dated['id']}@casefile" not in uids


def test_revoked_or_replaced_tokens_stop_working(api: Api) -> None:
    user, token = api.make_user("viewer")
    with api.client(token=token) as client:
        first = _feed_url(client)
        assert plain.get(first).status_code == 200
        second = _feed_url(client)  # a new URL replaces the old one
        assert second != first
        api_error(plain.get(first), 404, "NOT_FOUND")
        assert plain.get(second).status_code == 200
        assert ok(client.delete("/users/me/calendar-token")) == {"revoked": True}
        api_error(plain.get(second), 404, "NOT_FOUND")
        api_error(plain.get(api.base + "/calendar/not-a-token.ics"), 404, "NOT_FOUND")
        assert ok(client.delete("/users/me/calendar-token")) == {"revoked": True}  # idempotent
    # The token is stored hashed: the database never holds the URL's secret.
    with api.client(token=token) as client:
        url = _feed_url(client)
    secret = url.rsplit("/", 1)[1].removesuffix(".ics")
    stored = api.sql("SELECT token_hash FROM calendar_tokens WHERE user_id = :u", u=user["id"])
    assert len(stored) == 1 and secret not in stored[0][0]
    # A disabled user's feed is gone.
    with api.admin() as admin:
        ok(admin.patch(f"/users/{user['id']}", json={"active": False}))
    api_error(plain.get(url), 404, "NOT_FOUND")


def test_feed_tokens_are_for_users_not_api_keys(api: Api) -> None:
    key = api.make_key(["read:cases"])
    with api.client(api_key=key["key"]) as client:
        auth_error(client.post("/users/me/calendar-token"), 403, "AUTH_010")
    with api.client() as anonymous:
        auth_error(anonymous.post("/users/me/calendar-token"), 401, "AUTH_002")
