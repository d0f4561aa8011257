"""A legal hold freezes everything that belongs to the matter (docs/api-conventions.md#legal-holds):
notes and their history, tasks, deadlines, parties, documents. Every change and deletion is 409
`LEGAL_HOLD`, for an administrator too, and nothing changes; adding to the record stays possible.
Released, the same requests succeed."""

from __future__ import annotations

from typing import Any

import httpx

from tests.support.assertions import api_error, ok
from tests.support.factories import new_case, unique, upload


def _matter(admin: httpx.Client) -> dict[str, Any]:
    case = new_case(admin)
    case_id = case["id"]
    note = ok(admin.post(f"/cases/{case_id}/notes", json={"body": "First version"}), 201)
    ok(admin.patch(f"/notes/{note['id']}", json={"body": "Second version"}))
    contact = ok(admin.post("/contacts", json={"name": unique("Witness "), "kind": "person"}), 201)
    party = ok(
        admin.post(f"/cases/{case_id}/parties", json={"contact_id": contact["id"], "role": "witness"}), 201
    )
    saved = ok(
        admin.post(
            f"/cases/{case_id}/deadlines/compute",
            json={"rule_set": "frcp", "trigger": "service", "trigger_date": "2026-12-02", "save": True},
        )
    )
    return {
        "case": case_id,
        "note": note["id"],
        "task": ok(admin.post(f"/cases/{case_id}/tasks", json={"title": "Prepare"}), 201)["id"],
        "party": party["id"],
        "deadline": saved["deadline_id"],
        "document": ok(upload(admin, case_id), 201)["id"],
    }


def _changes(m: dict[str, Any]) -> list[tuple[str, str, dict[str, Any] | None]]:
    case = m["case"]
    return [
        ("PATCH", f"/notes/{m['note']}", {"body": "Rewritten"}),
        ("DELETE", f"/notes/{m['note']}", None),
        ("PATCH", f"/tasks/{m['task']}", {"title": "Changed"}),
        ("DELETE", f"/tasks/{m['task']}", None),
        ("PATCH", f"/cases/{case}/deadlines/{m['deadline']}", {"trigger_date": "2026-12-09"}),
        ("DELETE", f"/cases/{case}/deadlines/{m['deadline']}", None),
        ("DELETE", f"/cases/{case}/parties/{m['party']}", None),
        ("PATCH", f"/documents/{m['document']}", {"title": "Renamed"}),
        ("PUT", f"/documents/{m['document']}", {"title": "Renamed"}),
        ("DELETE", f"/documents/{m['document']}", None),
        ("DELETE", f"/cases/{case}", None),
    ]


def _record(admin: httpx.Client, m: dict[str, Any]) -> dict[str, Any]:
    case = m["case"]
    return {
        "note": ok(admin.get(f"/notes/{m['note']}")),
        "history": ok(admin.get(f"/notes/{m['note']}/history")),
        "task": ok(admin.get(f"/tasks/{m['task']}")),
        "deadline": ok(admin.get(f"/cases/{case}/deadlines/{m['deadline']}")),
        "tasks": ok(admin.get("/tasks", params={"deadline_id": m["deadline"]})),
        "parties": ok(admin.get(f"/cases/{case}/parties")),
        "document": ok(admin.get(f"/documents/{m['document']}")),
    }


def test_a_hold_freezes_every_thing_of_the_matter_until_released(admin: httpx.Client) -> None:
    m = _matter(admin)
    before = _record(admin, m)
    assert len(before["history"]) == 2
    hold = ok(admin.post(f"/cases/{m['case']}/holds", json={"reason": "litigation expected"}), 201)

    for method, path, body in _changes(m):
        response = admin.request(method, path, json=body) if body else admin.request(method, path)
        error = api_error(response, 409, "LEGAL_HOLD")
        assert "legal hold" in error["message"], (method, path)
    assert _record(admin, m) == before  # nothing changed, the note's history included

    # Adding to the record is still possible: it destroys nothing.
    ok(admin.post(f"/cases/{m['case']}/notes", json={"body": "Added under the hold"}), 201)
    ok(admin.post(f"/cases/{m['case']}/tasks", json={"title": "Added under the hold"}), 201)

    ok(admin.post(f"/holds/{hold['id']}/release"))
    for method, path, body in _changes(m):
        if method == "DELETE" and path == f"/cases/{m['case']}":
            continue
        response = admin.request(method, path, json=body) if body else admin.request(method, path)
        assert response.status_code == 200, (method, path, response.text)
    api_error(admin.get(f"/notes/{m['note']}/history"), 404, "NOT_FOUND")
