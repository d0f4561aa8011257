"""Deadlines through the API: rule sets, computation with its trace, saving as tasks, and saved
deadlines moving with their trigger date."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import httpx

from tests.support.assertions import api_error, auth_error, details, ok
from tests.support.factories import new_case, unique
from tests.support.servers import Api


def _compute(client: httpx.Client, case_id: str, **body) -> httpx.Response:
    return client.post(f"/cases/{case_id}/deadlines/compute", json={"rule_set": "frcp", **body})


def test_rule_sets_are_listed_with_their_rules(admin: httpx.Client) -> None:
    sets = ok(admin.get("/deadline-rule-sets"))
    frcp = next(s for s in sets if s["id"] == "frcp")
    assert frcp["origin"] == "shipped" and frcp["version"] == "2026.1" and frcp["calendar"]["country"] == "US"
    assert ok(admin.get("/deadline-rule-sets/frcp")) == frcp
    answer = next(r for r in frcp["rules"] if r["id"] == "answer")
    assert answer == {
        "id": "answer",
        "title": "Answer to the complaint",
        "trigger": "service",
        "days": 21,
        "counting": "calendar",
        "direction": "after",
        "citation": "FRCP 12(a)(1)(A)(i)",
    }
    assert {"service", "judgment_entry", "trial"} <= set(frcp["triggers"])
    api_error(admin.get("/deadline-rule-sets/nope"), 404, "NOT_FOUND")


def test_compute_every_rule_of_a_trigger_with_its_trace(admin: httpx.Client) -> None:
    case = new_case(admin)
    out = ok(_compute(admin, case["id"], trigger="judgment_entry", trigger_date="2026-12-02"))
    assert (out["rule_set"], out["rule_set_version"], out["deadline_id"]) == ("frcp", "2026.1", None)
    due = {d["rule_id"]: d["due_on"] for d in out["deadlines"]}
    # Hand-worked in tests/deadlines/test_counting.py.
    assert due == {
        "renewed_judgment_as_matter_of_law": "2026-12-30",
        "new_trial": "2026-12-30",
        "alter_or_amend_judgment": "2026-12-30",
        "attorneys_fees": "2026-12-16",
        "notice_of_appeal": "2027-01-04",
    }
    appeal = next(d for d in out["deadlines"] if d["rule_id"] == "notice_of_appeal")
    assert appeal["citation"] == "FRAP 4(a)(1)(A)"
    assert [(s["step"], s["date"]) for s in appeal["trace"]] == [
        ("start", "2026-12-02"),
        ("counting", "2026-12-02"),
        ("end_of_count", "2027-01-01"),
        ("skipped", "2027-01-01"),
        ("skipped", "2027-01-02"),
        ("skipped", "2027-01-03"),
        ("due", "2027-01-04"),
    ]
    assert "New Year's Day (legal holiday)" in appeal["trace"][3]["note"]
    # Nothing was saved.
    assert ok(admin.get(f"/cases/{case['id']}/tasks")) == []

    error = api_error(
        _compute(admin, case["id"], trigger="lunch", trigger_date="2026-12-02"), 422, "VALIDATION_ERROR"
    )
    assert "service" in details(error)["trigger"]
    body = {"rule_set": "nope", "trigger": "service", "trigger_date": "2026-12-02"}
    error = api_error(admin.post(f"/cases/{case['id']}/deadlines/compute", json=body), 404, "NOT_FOUND")
    assert "rule_set" in details(error)
    api_error(_compute(admin, case["id"], trigger="service", trigger_date="soon"), 422, "VALIDATION_ERROR")
    api_error(_compute(admin, "case_nope", trigger="service", trigger_date="2026-12-02"), 404, "NOT_FOUND")


def test_saved_deadlines_are_tasks_and_move_with_their_trigger(api: Api, admin: httpx.Client) -> None:
    case = new_case(admin)
    paralegal, token = api.make_user("paralegal")
    saved = ok(
        _compute(
            admin,
            case["id"],
            trigger="service",
            trigger_date="2026-12-04",
            save=True,
            assignee_id=paralegal["id"],
        )
    )
    deadline_id = saved["deadline_id"]
    assert deadline_id.startswith("dl_")
    [answer] = saved["deadlines"]
    task = ok(admin.get(f"/tasks/{answer['task_id']}"))
    assert (task["due_at"], task["deadline_id"], task["rule_id"]) == ("2026-12-28", deadline_id, "answer")
    assert (task["assignee_id"], task["status"], task["priority"]) == (paralegal["id"], "open", "high")
    assert "FRCP 12(a)(1)(A)(i)" in task["description"]
    [event] = api.events("deadline.saved", deadline_id=deadline_id)
    assert event["tasks"] == [{"task_id": task["id"], "rule_id": "answer", "due_at": "2026-12-28"}]
    # The paralegal sees it among "my tasks".
    with api.client(token=token) as client:
        assert task["id"] in [
            t["id"] for t in ok(client.get("/tasks", params={"assignee_id": "me", "status": "open"}))
        ]

    # Service was really on Thu 5 Nov 2026: day 21 is Thanksgiving, so Fri 27 Nov.
    moved = ok(
        admin.patch(f"/cases/{case['id']}/deadlines/{deadline_id}", json={"trigger_date": "2026-11-05"})
    )
    assert moved["deadline_id"] == deadline_id and moved["deadlines"][0]["due_on"] == "2026-11-27"
    assert ok(admin.get(f"/tasks/{task['id']}"))["due_at"] == "2026-11-27"
    [event] = api.events("deadline.moved", deadline_id=deadline_id)
    assert event["from"] == "2026-12-04" and event["trigger_date"] == "2026-11-05"
    assert event["tasks"] == [
        {"task_id": task["id"], "rule_id": "answer", "from": "2026-12-28", "to": "2026-11-27"}
    ]

    # Saving the same trigger again moves it too: still one deadline and one task.
    again = ok(_compute(admin, case["id"], trigger="service", trigger_date="2026-06-12", save=True))
    assert again["deadline_id"] == deadline_id and again["deadlines"][0]["task_id"] == task["id"]
    assert ok(admin.get(f"/tasks/{task['id']}"))["due_at"] == "2026-07-06"
    listed = ok(admin.get(f"/cases/{case['id']}/deadlines"))
    assert [(d["id"], d["trigger"], d["trigger_date"]) for d in listed] == [
        (deadline_id, "service", "2026-06-12")
    ]
    assert ok(admin.get(f"/cases/{case['id']}/deadlines", params={"search": "judgment"})) == []
    assert len(ok(admin.get(f"/cases/{case['id']}/deadlines", params={"search": "serv"}))) == 1
    assert ok(admin.get(f"/cases/{case['id']}/deadlines/{deadline_id}"))["rule_set_version"] == "2026.1"
    assert [t["id"] for t in ok(admin.get("/tasks", params={"deadline_id": deadline_id}))] == [task["id"]]

    # A second trigger is a second deadline; judgment rules make five tasks.
    judgment = ok(_compute(admin, case["id"], trigger="judgment_entry", trigger_date="2026-12-02", save=True))
    assert judgment["deadline_id"] != deadline_id and all(d["task_id"] for d in judgment["deadlines"])
    assert len(ok(admin.get(f"/cases/{case['id']}/tasks"))) == 6
    other = new_case(admin)
    api_error(
        admin.patch(f"/cases/{other['id']}/deadlines/{deadline_id}", json={"trigger_date": "2026-11-05"}),
        404,
        "NOT_FOUND",
    )


def test_saving_needs_write_on_the_case(api: Api, admin: httpx.Client) -> None:
    case = new_case(admin)
    _, viewer = api.make_user("viewer")
    with api.client(token=viewer) as client:
        assert ok(_compute(client, case["id"], trigger="service", trigger_date="2026-12-04"))["deadlines"]
        auth_error(
            _compute(client, case["id"], trigger="service", trigger_date="2026-12-04", save=True),
            403,
            "AUTH_010",
        )
        auth_error(client.post("/deadline-rule-sets", json={}), 403, "AUTH_010")
    assert ok(admin.get(f"/cases/{case['id']}/tasks")) == []


def test_a_firm_rule_set(api: Api, admin: httpx.Client) -> None:
    set_id = unique("firm-")
    body = {
        "id": set_id,
        "name": "Firm internal deadlines",
        "jurisdiction": "California state courts",
        "version": "3",
        "source": "Firm practice manual, section 4",
        "calendar": {
            "country": "US",
            "subdivision": "CA",
            "extra_holidays": [{"date": "2026-12-24", "name": "Court closure"}],
        },
        "rules": [
            {
                "id": "client_review",
                "title": "Draft to client",
                "trigger": "hearing",
                "days": 3,
                "counting": "court",
                "direction": "before",
                "citation": "Firm manual 4.2",
            },
        ],
    }
    created = ok(admin.post("/deadline-rule-sets", json=body), 201)
    assert created["origin"] == "firm" and created["version"] == "3" and created["triggers"] == ["hearing"]
    assert ok(admin.get(f"/deadline-rule-sets/{set_id}")) == created
    assert set_id in [s["id"] for s in ok(admin.get("/deadline-rule-sets"))]
    case = new_case(admin)
    # Hearing Mon 28 Dec 2026; 3 court days before: Sun 27, Sat 26, Fri 25 (Christmas) and Thu 24
    # (the court's closure) are not counted; Wed 23 (1), Tue 22 (2), Mon 21 (3): Mon 21 Dec 2026.
    out = ok(
        admin.post(
            f"/cases/{case['id']}/deadlines/compute",
            json={"rule_set": set_id, "trigger": "hearing", "trigger_date": "2026-12-28", "save": True},
        )
    )
    assert (out["rule_set_version"], out["deadlines"][0]["due_on"]) == ("3", "2026-12-21")
    assert ok(admin.get(f"/cases/{case['id']}/deadlines"))[0]["rule_set_version"] == "3"

    api_error(admin.post("/deadline-rule-sets", json=body), 409, "CONFLICT")
    api_error(admin.post("/deadline-rule-sets", json={**body, "id": "frcp"}), 409, "CONFLICT")
    wrong = {**body, "id": unique("bad-"), "calendar": {"country": "US", "subdivision": "XX"}}
    assert "calendar" in details(
        api_error(admin.post("/deadline-rule-sets", json=wrong), 422, "VALIDATION_ERROR")
    )
    no_rules = {**body, "id": unique("bad-"), "rules": []}
    assert "rules" in details(
        api_error(admin.post("/deadline-rule-sets", json=no_rules), 422, "VALIDATION_ERROR")
    )
    negative = {**body, "id": unique("bad-"), "rules": [{**body["rules"][0], "days": -1}]}
    assert "rules.0.days" in details(
        api_error(admin.post("/deadline-rule-sets", json=negative), 422, "VALIDATION_ERROR")
    )


def test_deleting_a_saved_deadline_keeps_finished_tasks(api: Api, admin: httpx.Client) -> None:
    case = new_case(admin)
    saved = ok(_compute(admin, case["id"], trigger="judgment_entry", trigger_date="2026-12-02", save=True))
    tasks = {d["rule_id"]: d["task_id"] for d in saved["deadlines"]}
    ok(admin.patch(f"/tasks/{tasks['attorneys_fees']}", json={"status": "done"}))
    path = f"/cases/{case['id']}/deadlines/{saved['deadline_id']}"
    assert ok(admin.delete(path)) == {"id": saved["deadline_id"], "deleted": True}
    api_error(admin.get(path), 404, "NOT_FOUND")
    remaining = ok(admin.get(f"/cases/{case['id']}/tasks"))
    assert [(t["id"], t["deadline_id"]) for t in remaining] == [(tasks["attorneys_fees"], None)]
    [event] = api.events("deadline.deleted", deadline_id=saved["deadline_id"])
    assert sorted(event["deleted_tasks"]) == sorted(t for r, t in tasks.items() if r != "attorneys_fees")


def test_saving_the_same_trigger_at_once_makes_one_deadline(api: Api, admin: httpx.Client) -> None:
    case = new_case(admin)
    body = {"rule_set": "frcp", "trigger": "service", "trigger_date": "2026-12-04", "save": True}

    def save(_: int) -> dict:
        with api.admin() as client:
            return dict(ok(client.post(f"/cases/{case['id']}/deadlines/compute", json=body)))

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(save, range(4)))
    assert len({r["deadline_id"] for r in results}) == 1
    assert len(ok(admin.get(f"/cases/{case['id']}/tasks"))) == 1
