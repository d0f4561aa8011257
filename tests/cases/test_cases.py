"""Cases: fields, validation, numbers, lifecycle, assignees, events, permissions."""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import httpx
import pytest

from tests.support.assertions import api_error, auth_error, details, ok
from tests.support.expected import LIFECYCLE, STATUSES
from tests.support.factories import new_case, unique
from tests.support.servers import Api

FULL = {
    "title": "Smith v. Jones",
    "case_type": "civil",
    "jurisdiction": "California",
    "client_name": "John Smith",
    "description": "Breach of contract claim",
    "status": "active",
    "priority": "high",
}


def test_create_returns_every_field_and_emits_case_created(api: Api, admin: httpx.Client) -> None:
    body = {**FULL, "case_number": unique("CV-")}
    case = ok(admin.post("/cases", json=body), 201)
    me = ok(admin.get("/users/me"))
    assert re.match(r"^case_[0-9a-z]{26}$", case["id"])
    assert {k: case[k] for k in body} == body
    assert case["created_by"] == me["id"] and case["assigned_to"] == []
    [event] = api.events("case.created", case_id=case["id"])
    assert event == {
        "case_id": case["id"],
        "title": body["title"],
        "case_number": body["case_number"],
        "case_type": "civil",
        "jurisdiction": "California",
        "client_name": "John Smith",
        "status": "active",
        "priority": "high",
        "created_by": me["id"],
        "custom_fields": {},
        "tags": [],
        "template_id": None,
        "template_version": None,
        "created_at": case["created_at"],
    }


def test_defaults(admin: httpx.Client) -> None:
    case = ok(admin.post("/cases", json={"title": "Defaults"}), 201)
    assert case["status"] == "active" and case["priority"] == "medium"
    assert case["created_at"] == case["updated_at"]


def test_title_rules(admin: httpx.Client) -> None:
    for body in ({}, {"title": ""}, {"title": "   "}, {"title": None}):
        assert details(api_error(admin.post("/cases", json=body), 422, "VALIDATION_ERROR")) == {
            "title": "Title is required"
        }
    r = admin.post("/cases", json={"title": "x" * 501})
    assert "title" in details(api_error(r, 422, "VALIDATION_ERROR"))


def test_every_failing_field_is_reported(admin: httpx.Client) -> None:
    number = new_case(admin)["case_number"]
    r = admin.post("/cases", json={"case_number": number})
    assert details(api_error(r, 422, "VALIDATION_ERROR")) == {
        "title": "Title is required",
        "case_number": "Case number must be unique",
    }
    r = admin.post("/cases", json={"title": "t", "priority": "whenever", "status": "lost", "case_type": ""})
    assert set(details(api_error(r, 422, "VALIDATION_ERROR"))) == {"priority", "status", "case_type"}


def test_duplicate_number_on_create_and_update(admin: httpx.Client) -> None:
    first, second = new_case(admin), new_case(admin)
    r = admin.post("/cases", json={"title": "Dup", "case_number": first["case_number"]})
    assert details(api_error(r, 422, "VALIDATION_ERROR")) == {"case_number": "Case number must be unique"}
    r = admin.patch(f"/cases/{second['id']}", json={"case_number": first["case_number"]})
    assert details(api_error(r, 422, "VALIDATION_ERROR")) == {"case_number": "Case number must be unique"}
    assert ok(admin.get(f"/cases/{second['id']}"))["case_number"] == second["case_number"]


def test_concurrent_creates_with_one_number_give_exactly_one_case(api: Api) -> None:
    number = unique("RACE-")
    token = api.admin_token

    def create(i: int) -> httpx.Response:
        with api.client(token=token) as c:
            return c.post("/cases", json={"title": f"Racer {i}", "case_number": number})

    with ThreadPoolExecutor(10) as pool:
        responses = list(pool.map(create, range(10)))
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [201] + [422] * 9, [r.text for r in responses]
    for r in responses:
        if r.status_code == 422:
            assert details(r.json()["error"]) == {"case_number": "Case number must be unique"}
    assert api.sql("SELECT count(*) FROM cases WHERE case_number = :n", n=number)[0][0] == 1


def test_automatic_numbers_are_sequential_and_unique_under_concurrency(api: Api) -> None:
    token = api.admin_token
    year = datetime.now(UTC).year

    def create(i: int) -> str:
        with api.client(token=token) as c:
            return str(ok(c.post("/cases", json={"title": f"Auto {i}"}), 201)["case_number"])

    with ThreadPoolExecutor(8) as pool:
        numbers = list(pool.map(create, range(16)))
    assert len(set(numbers)) == 16
    assert all(re.match(rf"^{year}-\d{{6}}$", n) for n in numbers)
    values = sorted(int(n.split("-")[1]) for n in numbers)
    assert values == list(range(values[0], values[0] + 16))  # no gaps, no repeats


def test_automatic_number_skips_one_taken_by_hand(admin: httpx.Client) -> None:
    year = datetime.now(UTC).year
    last = int(ok(admin.post("/cases", json={"title": "probe"}), 201)["case_number"].split("-")[1])
    ok(admin.post("/cases", json={"title": "by hand", "case_number": f"{year}-{last + 1:06d}"}), 201)
    auto = ok(admin.post("/cases", json={"title": "auto"}), 201)
    assert auto["case_number"] == f"{year}-{last + 2:06d}"


def test_put_and_patch_are_partial_and_emit_changes(api: Api, admin: httpx.Client) -> None:
    case = new_case(admin)
    for method in ("put", "patch"):
        new_priority = "low" if method == "put" else "urgent"
        upd = ok(admin.request(method.upper(), f"/cases/{case['id']}", json={"priority": new_priority}))
        assert upd["priority"] == new_priority and upd["title"] == case["title"]
        assert upd["updated_at"] >= case["updated_at"]
    updates = api.events("case.updated", case_id=case["id"])
    assert [u["changes"] for u in updates] == [
        {"priority": {"from": "high", "to": "low"}},
        {"priority": {"from": "low", "to": "urgent"}},
    ]


def test_noop_update_changes_nothing(api: Api, admin: httpx.Client) -> None:
    case = new_case(admin)
    same = ok(admin.put(f"/cases/{case['id']}", json={"title": case["title"], "status": case["status"]}))
    assert same == case
    assert api.events("case.updated", case_id=case["id"]) == []


def test_update_can_clear_optional_fields_but_not_required_ones(admin: httpx.Client) -> None:
    case = new_case(admin)
    assert ok(admin.patch(f"/cases/{case['id']}", json={"description": None}))["description"] is None
    r = admin.patch(f"/cases/{case['id']}", json={"status": None, "title": None, "case_number": None})
    assert set(details(api_error(r, 422, "VALIDATION_ERROR"))) == {"status", "title", "case_number"}


@pytest.mark.parametrize("start", STATUSES)
def test_status_lifecycle(api: Api, admin: httpx.Client, start: str) -> None:
    for target in STATUSES:
        if target == start:
            continue
        case = new_case(admin, status=start)
        r = admin.put(f"/cases/{case['id']}", json={"status": target})
        if target in LIFECYCLE[start]:
            assert ok(r)["status"] == target
            [moved] = api.events("case.status_changed", case_id=case["id"])
            assert (
                moved["from"] == start and moved["to"] == target and moved["changed_by"].startswith("user_")
            )
        else:
            api_error(r, 409, "INVALID_STATUS_TRANSITION")
            assert ok(admin.get(f"/cases/{case['id']}"))["status"] == start
            assert api.events("case.status_changed", case_id=case["id"]) == []


def test_unknown_status_is_422(admin: httpx.Client) -> None:
    case = new_case(admin)
    api_error(admin.put(f"/cases/{case['id']}", json={"status": "vaporised"}), 422, "VALIDATION_ERROR")


def test_assignees(api: Api, admin: httpx.Client) -> None:
    case = new_case(admin)
    user, _ = api.make_user("attorney")
    assigned = ok(admin.post(f"/cases/{case['id']}/assignees", json={"user_id": user["id"]}))
    assert assigned["assigned_to"] == [user["id"]]
    again = ok(admin.post(f"/cases/{case['id']}/assignees", json={"user_id": user["id"]}))
    assert again["assigned_to"] == [user["id"]]
    [event] = api.events("case.assigned", case_id=case["id"])
    assert event["user_id"] == user["id"] and event["assigned_to"] == [user["id"]]
    assert ok(admin.get(f"/cases/{case['id']}"))["assigned_to"] == [user["id"]]
    r = admin.post(f"/cases/{case['id']}/assignees", json={"user_id": "user_nobody"})
    assert details(api_error(r, 404, "NOT_FOUND")) == {"user_id": "User not found"}
    removed = ok(admin.delete(f"/cases/{case['id']}/assignees/{user['id']}"))
    assert removed["assigned_to"] == []
    api_error(admin.delete(f"/cases/{case['id']}/assignees/{user['id']}"), 404, "NOT_FOUND")
    [change] = api.events("case.updated", case_id=case["id"])
    assert change["changes"] == {"assigned_to": {"from": [user["id"]], "to": []}}


def test_delete_emits_and_removes(api: Api, admin: httpx.Client) -> None:
    case = new_case(admin)
    user, _ = api.make_user("viewer")
    ok(admin.post(f"/cases/{case['id']}/assignees", json={"user_id": user["id"]}))
    assert ok(admin.delete(f"/cases/{case['id']}")) == {"id": case["id"], "deleted": True}
    api_error(admin.get(f"/cases/{case['id']}"), 404, "NOT_FOUND")
    api_error(admin.delete(f"/cases/{case['id']}"), 404, "NOT_FOUND")
    assert api.events("case.deleted", case_id=case["id"])
    # A deleted case is in the trash (tests/trash), assignees and all, until it is purged.
    assignees = "SELECT count(*) FROM case_assignees WHERE case_id = :id"
    assert api.sql(assignees, id=case["id"])[0][0] == 1
    ok(admin.delete(f"/admin/trash/{case['id']}"))
    assert api.sql(assignees, id=case["id"])[0][0] == 0


def test_failed_change_records_no_event(api: Api, admin: httpx.Client) -> None:
    case = new_case(admin)
    other = new_case(admin)
    api_error(
        admin.patch(f"/cases/{case['id']}", json={"case_number": other["case_number"], "priority": "low"}),
        422,
        "VALIDATION_ERROR",
    )
    assert api.events("case.updated", case_id=case["id"]) == []  # no event without its change


def test_role_permissions_on_cases(api: Api, admin: httpx.Client) -> None:
    case = new_case(admin)
    _, viewer = api.make_user("viewer")
    _, paralegal = api.make_user("paralegal")
    with api.client(token=viewer) as c:
        ok(c.get(f"/cases/{case['id']}"))
        auth_error(c.patch(f"/cases/{case['id']}", json={"priority": "low"}), 403, "AUTH_010")
        auth_error(c.delete(f"/cases/{case['id']}"), 403, "AUTH_010")
    with api.client(token=paralegal) as c:
        mine = ok(c.post("/cases", json={"title": "paralegal's"}), 201)
        ok(c.delete(f"/cases/{mine['id']}"))


def test_fields_on_a_single_case(admin: httpx.Client) -> None:
    case = new_case(admin)
    assert ok(admin.get(f"/cases/{case['id']}", params={"fields": "id,status"})) == {
        "id": case["id"],
        "status": case["status"],
    }
    api_error(admin.get(f"/cases/{case['id']}", params={"fields": "secret"}), 422, "VALIDATION_ERROR")


def test_a_write_is_visible_to_the_very_next_request(admin: httpx.Client) -> None:
    """The request's transaction commits before its response leaves (a regression: it once
    committed after, and a fast client could read its own write as missing)."""
    for _ in range(25):
        case = ok(admin.post("/cases", json={"title": "read your writes"}), 201)
        ok(admin.get(f"/cases/{case['id']}"))


SUMMARY = {"summary": {"text": "Quoted from a sealed exhibit.", "sentences": []}}


def test_case_ai_output_needs_read_documents(api: Api, admin: httpx.Client) -> None:
    """The case's `ai` quotes its documents: null for a caller without `read:documents`, on every
    path that answers with the case; starting a summary needs `read:documents` too."""
    case = new_case(admin)
    api.sql("UPDATE cases SET ai = :ai WHERE id = :id", ai=json.dumps(SUMMARY), id=case["id"])
    assert ok(admin.get(f"/cases/{case['id']}"))["ai"] == SUMMARY
    key = api.make_key(["read:cases", "write:cases"])["key"]
    with api.client(api_key=key) as c:
        auth_error(c.post(f"/cases/{case['id']}/summarize"), 403, "AUTH_010")
        assert ok(c.get(f"/cases/{case['id']}"))["ai"] is None
        assert ok(c.get(f"/cases/{case['id']}", params={"fields": "id,ai"})) == {"id": case["id"], "ai": None}
        listed = ok(c.get("/cases", params={"limit": 100}))
        assert [found["ai"] for found in listed if found["id"] == case["id"]] == [None]
        assert ok(c.patch(f"/cases/{case['id']}", json={"priority": "low"}))["ai"] is None
        me = ok(admin.get("/users/me"))
        assert ok(c.post(f"/cases/{case['id']}/assignees", json={"user_id": me["id"]}))["ai"] is None
        assert ok(c.delete(f"/cases/{case['id']}/assignees/{me['id']}"))["ai"] is None
    reader = api.make_key(["read:cases", "read:documents"])["key"]
    with api.client(api_key=reader) as c:
        assert ok(c.get(f"/cases/{case['id']}"))["ai"] == SUMMARY
    summarizer = api.make_key(["write:cases", "read:documents"])["key"]
    with api.client(api_key=summarizer) as c:  # past the permissions: AI is off on this server
        api_error(c.post(f"/cases/{case['id']}/summarize"), 409, "CONFLICT")


def test_a_case_write_answer_shows_no_more_than_the_caller_may_read(api: Api, admin: httpx.Client) -> None:
    case = new_case(admin)
    me = ok(admin.get("/users/me"))
    key = api.make_key(["write:cases"])["key"]
    with api.client(api_key=key) as c:
        made = ok(c.post("/cases", json={"title": "written blind"}), 201)
        assert made == {"id": made["id"]} and made["id"].startswith("case_")
        only_id = {"id": case["id"]}
        assert ok(c.patch(f"/cases/{case['id']}", json={"priority": "low"})) == only_id
        assert ok(c.put(f"/cases/{case['id']}", json={"priority": "high"})) == only_id
        assert ok(c.post(f"/cases/{case['id']}/assignees", json={"user_id": me["id"]})) == only_id
        assert ok(c.delete(f"/cases/{case['id']}/assignees/{me['id']}")) == only_id
    assert ok(admin.get(f"/cases/{made['id']}"))["title"] == "written blind"
    assert ok(admin.get(f"/cases/{case['id']}"))["priority"] == "high"
