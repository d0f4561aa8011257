"""Tasks on cases: the contract's shape, due dates and date-times, reminders, status, "my tasks"
across cases, the common listing, permissions and events."""

from __future__ import annotations

import httpx

from tests.support.assertions import api_error, auth_error, details, ok
from tests.support.factories import new_case, unique
from tests.support.servers import Api


def _task(client: httpx.Client, case_id: str, **body) -> dict:
    return dict(ok(client.post(f"/cases/{case_id}/tasks", json={"title": unique("Task "), **body}), 201))


def test_create_read_update_delete(api: Api, admin: httpx.Client) -> None:
    case = new_case(admin)
    me = ok(admin.get("/users/me"))
    task = _task(
        admin,
        case["id"],
        title="File reply brief",
        description="Ten pages at most",
        assignee_id=me["id"],
        due_at="2027-01-15",
        priority="urgent",
        reminders=[{"minutes_before": 1440}, {"at": "2027-01-14T09:00:00+01:00"}],
    )
    assert task["id"].startswith("tsk_")
    assert task["case_id"] == case["id"] and task["assignee_id"] == me["id"]
    assert (task["due_at"], task["priority"], task["status"]) == ("2027-01-15", "urgent", "open")
    assert task["reminders"] == [{"minutes_before": 1440}, {"at": "2027-01-14T08:00:00.000Z"}]
    assert task["deadline_id"] is None and task["completed_at"] is None
    assert ok(admin.get(f"/tasks/{task['id']}")) == task
    assert ok(admin.get(f"/tasks/{task['id']}", params={"fields": "id,due_at"})) == {
        "id": task["id"],
        "due_at": "2027-01-15",
    }

    # A date-time keeps its instant (shown in UTC); done sets completed_at.
    done = ok(
        admin.patch(f"/tasks/{task['id']}", json={"due_at": "2027-01-15T17:30:00-05:00", "status": "done"})
    )
    assert done["due_at"] == "2027-01-15T22:30:00.000Z" and done["status"] == "done" and done["completed_at"]
    [event] = api.events("task.updated", task_id=task["id"])
    assert event["changes"]["due_at"] == {"from": "2027-01-15", "to": "2027-01-15T22:30:00.000Z"}
    assert event["changes"]["status"] == {"from": "open", "to": "done"}
    # null clears what may be empty; nothing changed emits nothing.
    cleared = ok(
        admin.patch(f"/tasks/{task['id']}", json={"due_at": None, "assignee_id": None, "reminders": None})
    )
    assert (cleared["due_at"], cleared["assignee_id"], cleared["reminders"]) == (None, None, [])
    ok(admin.patch(f"/tasks/{task['id']}", json={"due_at": None}))
    assert len(api.events("task.updated", task_id=task["id"])) == 2

    assert ok(admin.delete(f"/tasks/{task['id']}")) == {"id": task["id"], "deleted": True}
    api_error(admin.get(f"/tasks/{task['id']}"), 404, "NOT_FOUND")
    assert [e["task_id"] for e in api.events("task.created", case_id=case["id"])] == [task["id"]]
    assert api.events("task.deleted", task_id=task["id"])


def test_validation(admin: httpx.Client) -> None:
    case = new_case(admin)
    path = f"/cases/{case['id']}/tasks"
    assert details(api_error(admin.post(path, json={}), 422, "VALIDATION_ERROR")) == {
        "title": "Title is required"
    }
    bad = {
        "due_at": "2027-01-15T17:00:00",  # no offset: which instant?
        "status": "started",
        "priority": "critical",
        "assignee_id": "user_nobody",
    }
    found = details(api_error(admin.post(path, json={"title": "x", **bad}), 422, "VALIDATION_ERROR"))
    assert set(found) == {"due_at", "status", "priority"}
    assert "offset" in found["due_at"]
    error = api_error(admin.post(path, json={"title": "x", "assignee_id": "user_nobody"}), 404, "NOT_FOUND")
    assert details(error) == {"assignee_id": "User not found"}
    both = {"title": "x", "reminders": [{"minutes_before": 5, "at": "2027-01-01T00:00:00Z"}]}
    assert "reminders.0" in details(api_error(admin.post(path, json=both), 422, "VALIDATION_ERROR"))
    api_error(admin.post("/cases/case_nope/tasks", json={"title": "x"}), 404, "NOT_FOUND")
    task = _task(admin, case["id"])
    error = api_error(admin.patch(f"/tasks/{task['id']}", json={"status": None}), 422, "VALIDATION_ERROR")
    assert "status" in details(error)


def test_my_tasks_across_cases_soonest_first(api: Api, admin: httpx.Client) -> None:
    user, token = api.make_user("paralegal")
    tag = unique("zebra")
    first, second = new_case(admin), new_case(admin)
    later = _task(admin, first["id"], title=f"{tag} later", assignee_id=user["id"], due_at="2027-03-01")
    sooner = _task(
        admin, second["id"], title=f"{tag} sooner", assignee_id=user["id"], due_at="2027-02-01T10:00:00Z"
    )
    undated = _task(admin, second["id"], title=f"{tag} undated", assignee_id=user["id"])
    done = _task(
        admin, first["id"], title=f"{tag} done", assignee_id=user["id"], due_at="2027-01-01", status="done"
    )
    _task(admin, first["id"], title=f"{tag} someone else's", due_at="2027-01-01")

    with api.client(token=token) as mine:
        r = mine.get("/tasks", params={"assignee_id": "me", "status": "open"})
        listed = ok(r)
        # Soonest first by default; no due date sorts last.
        assert [t["id"] for t in listed] == [sooner["id"], later["id"], undated["id"]]
        assert r.json()["meta"]["pagination"]["total"] == 3
        everything = ok(mine.get("/tasks", params={"assignee_id": "me", "order": "desc", "limit": 100}))
        assert [t["id"] for t in everything][:2] == [undated["id"], later["id"]]
        assert done["id"] in [t["id"] for t in everything]
        # Filters, search over titles, fields.
        assert [t["id"] for t in ok(mine.get("/tasks", params={"search": f"{tag} soon"}))] == [sooner["id"]]
        in_first = ok(
            mine.get("/tasks", params={"case_id": first["id"], "assignee_id": "me", "fields": "id,title"})
        )
        assert {t["id"] for t in in_first} == {later["id"], done["id"]}
        assert all(set(t) == {"id", "title"} for t in in_first)
        window = ok(
            mine.get("/tasks", params={"search": tag, "due_from": "2027-01-15", "due_to": "2027-02-28"})
        )
        assert [t["id"] for t in window] == [sooner["id"]]
        unassigned = ok(mine.get("/tasks", params={"search": tag, "assignee_id": "none"}))
        assert [t["title"] for t in unassigned] == [f"{tag} someone else's"]
        # A case's own list takes the same parameters.
        assert [
            t["id"] for t in ok(mine.get(f"/cases/{second['id']}/tasks", params={"assignee_id": "me"}))
        ] == [
            sooner["id"],
            undated["id"],
        ]
        api_error(mine.get("/tasks", params={"status": "started"}), 422, "VALIDATION_ERROR")
        api_error(mine.get("/tasks", params={"due_from": "soon"}), 422, "VALIDATION_ERROR")
        api_error(mine.get("/tasks", params={"sort": "nope"}), 422, "VALIDATION_ERROR")


def test_permissions_follow_the_case(api: Api, admin: httpx.Client) -> None:
    case = new_case(admin)
    task = _task(admin, case["id"])
    _, viewer = api.make_user("viewer")
    with api.client(token=viewer) as client:
        assert ok(client.get(f"/tasks/{task['id']}"))["id"] == task["id"]
        assert task["id"] in [t["id"] for t in ok(client.get(f"/cases/{case['id']}/tasks"))]
        auth_error(client.post(f"/cases/{case['id']}/tasks", json={"title": "x"}), 403, "AUTH_010")
        auth_error(client.patch(f"/tasks/{task['id']}", json={"title": "y"}), 403, "AUTH_010")
        auth_error(client.delete(f"/tasks/{task['id']}"), 403, "AUTH_010")
    key = api.make_key(["write:cases"])
    with api.client(api_key=key["key"]) as client:
        # Writing without read:cases answers the id only.
        assert ok(client.post(f"/cases/{case['id']}/tasks", json={"title": "by key"}), 201).keys() == {"id"}
        auth_error(client.get("/tasks"), 403, "AUTH_010")


def test_tasks_go_with_their_case(admin: httpx.Client) -> None:
    case = new_case(admin)
    task = _task(admin, case["id"])
    ok(admin.delete(f"/cases/{case['id']}"))
    api_error(admin.get(f"/tasks/{task['id']}"), 404, "NOT_FOUND")
