"""Deadlines at the calendar's ends: a count that would run past 9999-12-31 or before 0001-01-01 is
a 422 naming `trigger_date`, for every rule set and trigger, never a server error. And the
calendar feed's token under concurrent rotations: each answered, exactly one valid after."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import httpx

from tests.support.assertions import api_error, details, ok
from tests.support.factories import new_case
from tests.support.servers import Api

EDGE_DATES = ("0001-01-01", "0001-01-05", "0001-02-01", "9999-11-30", "9999-12-24", "9999-12-31")


def test_every_rule_set_and_trigger_at_the_calendars_ends(admin: httpx.Client) -> None:
    case = new_case(admin)
    outcomes: dict[int, int] = {}
    for rule_set in ok(admin.get("/deadline-rule-sets")):
        for trigger in rule_set["triggers"]:
            for day in EDGE_DATES:
                body = {"rule_set": rule_set["id"], "trigger": trigger, "trigger_date": day}
                response = admin.post(f"/cases/{case['id']}/deadlines/compute", json=body)
                outcomes[response.status_code] = outcomes.get(response.status_code, 0) + 1
                if response.status_code == 200:
                    for deadline in response.json()["data"]["deadlines"]:
                        assert "0001-01-01" <= deadline["due_on"] <= "9999-12-31"
                    continue
                error = api_error(response, 422, "VALIDATION_ERROR")
                assert "outside the calendar" in details(error)["trigger_date"], (
                    rule_set["id"],
                    trigger,
                    day,
                )
    assert set(outcomes) == {200, 422} and outcomes[422] >= 10


def test_moving_a_saved_deadline_past_the_end_is_refused_and_changes_nothing(admin: httpx.Client) -> None:
    case = new_case(admin)
    body = {"rule_set": "frcp", "trigger": "service", "trigger_date": "2026-12-02", "save": True}
    saved = ok(admin.post(f"/cases/{case['id']}/deadlines/compute", json=body))
    path = f"/cases/{case['id']}/deadlines/{saved['deadline_id']}"
    error = api_error(admin.patch(path, json={"trigger_date": "9999-12-31"}), 422, "VALIDATION_ERROR")
    assert "trigger_date" in details(error)
    assert ok(admin.get(path))["trigger_date"] == "2026-12-02"


def test_twenty_concurrent_rotations_leave_exactly_one_valid_token(api: Api) -> None:
    _, token = api.make_user("attorney")
    with api.client(token=token) as client:

        def rotate(_: int) -> httpx.Response:
            return client.post("/users/me/calendar-token")

        with ThreadPoolExecutor(max_workers=20) as pool:
            responses = list(pool.map(rotate, range(20)))
    assert [r.status_code for r in responses] == [201] * 20, [
        r.text for r in responses if r.status_code != 201
    ]
    urls = {r.json()["data"]["url"] for r in responses}
    assert len(urls) == 20
    with httpx.Client(base_url=api.root, timeout=30) as anonymous:
        statuses = [anonymous.get(urlsplit(url).path).status_code for url in urls]
    assert sorted(statuses) == [200] + [404] * 19
