"""Every read of a matter's data leaves one entry, and every refusal a `denied` one, tasks and notes
included (SQLite and PostgreSQL)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import httpx

from tests.support.assertions import api_error, auth_error, ok
from tests.support.factories import new_case, unique, upload
from tests.support.servers import Api


def case_trail(admin: httpx.Client, case_id: str, **params: Any) -> list[dict[str, Any]]:
    return list(ok(admin.get("/admin/audit", params={"case_id": case_id, "limit": 100, **params})))


def test_each_read_of_a_matters_data_is_one_entry(api: Api, admin: httpx.Client) -> None:
    case = new_case(admin)
    cid = case["id"]
    ok(upload(admin, cid), 201)
    note = ok(admin.post(f"/cases/{cid}/notes", json={"body": "Privileged strategy"}), 201)
    task = ok(admin.post(f"/cases/{cid}/tasks", json={"title": unique("Task ")}), 201)
    reads = {
        "document.list": f"/cases/{cid}/documents",
        "note.list": f"/cases/{cid}/notes",
        "note.read": f"/notes/{note['id']}",
        "note.history": f"/notes/{note['id']}/history",
        "task.list": f"/cases/{cid}/tasks",
        "task.read": f"/tasks/{task['id']}",
        "party.list": f"/cases/{cid}/parties",
        "deadline.list": f"/cases/{cid}/deadlines",
        "hold.list": f"/cases/{cid}/holds",
        "job.list": f"/cases/{cid}/jobs",
        "access.read": f"/cases/{cid}/access",
        "audit.read": f"/cases/{cid}/audit",
    }
    request_ids = {}
    for action, path in reads.items():
        response = admin.get(path)
        ok(response)
        request_ids[action] = response.headers["x-request-id"]
    asked = admin.post(f"/cases/{cid}/ask", json={"question": "Who is the client?"})
    ok(asked)
    entries = case_trail(admin, cid)
    per_request = Counter(e["request_id"] for e in entries)
    for action, request_id in request_ids.items():
        found = [e for e in entries if e["request_id"] == request_id]
        assert [e["action"] for e in found] == [action], action  # one entry per read
        assert found[0]["outcome"] == "success" and per_request[request_id] == 1
    ask = next(e for e in entries if e["request_id"] == asked.headers["x-request-id"])
    assert ask["action"] == "case.ask" and ask["details"] == {"question": "Who is the client?"}
    # Tasks across every case: one entry, naming the cases shown.
    everywhere = admin.get("/tasks", params={"case_id": cid})
    ok(everywhere)
    across = [
        e
        for e in ok(admin.get("/admin/audit", params={"action": "task.list", "limit": 100}))
        if e["request_id"] == everywhere.headers["x-request-id"]
    ]
    assert len(across) == 1 and across[0]["details"]["case_ids"] == [cid]


def test_the_calendar_feed_is_read_by_its_user(api: Api, admin: httpx.Client) -> None:
    user, token = api.make_user("attorney")
    with api.client(token=token) as client:
        url = ok(client.post("/users/me/calendar-token"), 201)["url"]
    with httpx.Client() as plain:
        assert plain.get(url).status_code == 200
    read = ok(admin.get("/admin/audit", params={"action": "calendar.read", "actor_id": user["id"]}))
    assert len(read) == 1 and read[0]["user_id"] == user["id"] and read[0]["details"]["tasks"] == 0


def test_refusals_on_tasks_and_notes_are_denied_entries(api: Api, admin: httpx.Client) -> None:
    _, viewer_token = api.make_user("viewer")
    outsider, outsider_token = api.make_user("attorney")
    case = new_case(admin)
    cid = case["id"]
    task = ok(admin.post(f"/cases/{cid}/tasks", json={"title": unique("Task ")}), 201)
    note = ok(admin.post(f"/cases/{cid}/notes", json={"body": "Privileged"}), 201)
    with api.client(token=viewer_token) as client:  # sees the firm case, may not change it
        auth_error(client.patch(f"/tasks/{task['id']}", json={"title": "no"}), 403, "AUTH_010")
    ok(admin.put(f"/cases/{cid}/access", json={"access": "restricted", "grants": [], "walls": []}))
    with api.client(token=outsider_token) as client:  # may not see the restricted case at all
        api_error(client.get(f"/tasks/{task['id']}"), 404, "NOT_FOUND")
        api_error(client.get(f"/notes/{note['id']}/history"), 404, "NOT_FOUND")
        api_error(client.get(f"/cases/{cid}/tasks"), 404, "NOT_FOUND")
    denied = {(e["action"], e["user_id"]) for e in case_trail(admin, cid) if e["outcome"] == "denied"}
    assert {
        ("task.read", outsider["id"]),
        ("note.history", outsider["id"]),
        ("task.list", outsider["id"]),
    } <= denied


def test_a_refused_change_of_a_task_names_its_case(api: Api, admin: httpx.Client) -> None:
    me, token = api.make_user("attorney")
    case = new_case(admin)
    task = ok(admin.post(f"/cases/{case['id']}/tasks", json={"title": unique("Task ")}), 201)
    # A read grant only: the attorney sees the case, and may not change its tasks.
    grant = {"subject_type": "user", "subject_id": me["id"], "level": "read"}
    ok(
        admin.put(
            f"/cases/{case['id']}/access", json={"access": "restricted", "grants": [grant], "walls": []}
        )
    )
    with api.client(token=token) as client:
        auth_error(client.patch(f"/tasks/{task['id']}", json={"title": "no"}), 403, "AUTH_012")
    refused = [e for e in case_trail(admin, case["id"]) if e["outcome"] == "denied"]
    assert [(e["action"], e["user_id"], e["details"]["reason"]) for e in refused] == [
        ("task.update", me["id"], "AUTH_012")
    ]
