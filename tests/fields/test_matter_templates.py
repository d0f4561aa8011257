"""Matter templates (issue 27, item 5): versioned by administrators; `POST /cases {template_id}`
makes the case with its template's type, defaults, custom fields and tags, its parties, saved
deadlines and tasks, in one transaction with their events; a later version changes no case made
from an earlier one."""

from __future__ import annotations

from datetime import date, timedelta

import httpx
import pytest

from tests.support.assertions import api_error, details, ok
from tests.support.factories import new_case, unique, upload
from tests.support.servers import Api


@pytest.fixture(scope="module")
def template(api: Api) -> dict:
    ctype, field = unique("pi"), unique("venue")
    with api.admin() as admin:
        ok(
            admin.post("/admin/custom-fields", json={"name": field, "label": "Venue", "field_type": "text"}),
            201,
        )
        court = ok(admin.post("/contacts", json={"name": "Superior Court", "kind": "organization"}), 201)
        library = new_case(admin, title=unique("Standard forms "))
        form = ok(upload(admin, library["id"], b"Engagement letter\n", name="engagement.txt"), 201)
        body = {
            "id": unique("personal-injury-"),
            "name": "Personal injury",
            "case_type": ctype,
            "defaults": {
                "priority": "high",
                "jurisdiction": "California",
                "description": "From the template",
            },
            "custom_fields": {field: "Alameda"},
            "parties": [{"role": "related", "contact_id": court["id"]}],
            "deadlines": [{"rule_set": "frcp", "trigger": "service"}],
            "tasks": [
                {"title": "Intake interview", "due_in_days": 3},
                {"title": "Draft answer", "relative_to": "trigger", "trigger": "service", "due_in_days": 14},
                {"title": "No date"},
            ],
            "tags": ["injury", "intake"],
            "documents": [form["id"]],
        }
        created = admin.post("/admin/matter-templates", json=body)
        assert created.status_code == 201, created.text
        assert created.headers["Location"].endswith(f"/matter-templates/{body['id']}/versions/1")
    return {"body": body, "field": field, "court": court, "ctype": ctype, "form": form}


def _tasks(admin: httpx.Client, case_id: str) -> dict[str, dict]:
    return {t["title"]: t for t in ok(admin.get(f"/cases/{case_id}/tasks", params={"limit": 100}))}


def test_a_case_from_a_template_gets_everything_it_implies(api: Api, admin: httpx.Client, template) -> None:
    body, field = template["body"], template["field"]
    served = "2026-12-01"
    case = ok(
        admin.post(
            "/cases",
            json={
                "title": "Doe v. Roe",
                "template_id": body["id"],
                "trigger_dates": {"service": served},
                "tags": ["vip"],
            },
        ),
        201,
    )
    assert (case["template_id"], case["template_version"]) == (body["id"], 1)
    assert case["case_type"] == template["ctype"] and case["priority"] == "high"
    assert case["jurisdiction"] == "California" and case["description"] == "From the template"
    assert case["custom_fields"] == {field: "Alameda"} and case["tags"] == ["injury", "intake", "vip"]
    parties = ok(admin.get(f"/cases/{case['id']}/parties"))
    assert [(p["contact_id"], p["role"]) for p in parties] == [(template["court"]["id"], "related")]
    (deadline,) = ok(admin.get(f"/cases/{case['id']}/deadlines"))
    assert (deadline["rule_set"], deadline["trigger"], deadline["trigger_date"]) == (
        "frcp",
        "service",
        served,
    )
    tasks = _tasks(admin, case["id"])
    today = date.fromisoformat(case["created_at"][:10])
    assert tasks["Intake interview"]["due_at"] == (today + timedelta(days=3)).isoformat()
    assert tasks["Draft answer"]["due_at"] == "2026-12-15"
    assert tasks["No date"]["due_at"] is None
    assert "Answer to the complaint" in tasks  # the rule set's own task for the trigger
    (copy,) = ok(admin.get(f"/cases/{case['id']}/documents"))
    assert copy["id"] != template["form"]["id"] and copy["title"] == template["form"]["title"]
    assert admin.get(f"/documents/{copy['id']}/content").content == b"Engagement letter\n"
    # Each part emitted its event, in the same transaction as the case.
    assert api.events("case.created", case_id=case["id"])[0]["template_id"] == body["id"]
    assert len(api.events("party.added", case_id=case["id"])) == 1
    assert len(api.events("deadline.saved", case_id=case["id"])) == 1
    assert len(api.events("task.created", case_id=case["id"])) == len(tasks)
    assert [e["document_id"] for e in api.events("document.uploaded", case_id=case["id"])] == [copy["id"]]


def test_the_request_wins_over_the_template(admin: httpx.Client, template) -> None:
    body, field = template["body"], template["field"]
    case = ok(
        admin.post(
            "/cases",
            json={
                "title": "Mine",
                "template_id": body["id"],
                "priority": "low",
                "custom_fields": {field: "Marin"},
                "trigger_dates": {"service": "2026-11-02"},
            },
        ),
        201,
    )
    assert case["priority"] == "low" and case["custom_fields"][field] == "Marin"


def test_a_new_version_changes_no_case_made_before(admin: httpx.Client, template) -> None:
    body = template["body"]
    tid = unique("tpl-")
    ok(admin.post("/admin/matter-templates", json={**body, "id": tid}), 201)
    first = ok(
        admin.post(
            "/cases", json={"title": "v1", "template_id": tid, "trigger_dates": {"service": "2026-10-01"}}
        ),
        201,
    )
    second_body = {k: v for k, v in body.items() if k != "id"} | {
        "tags": ["v2"],
        "tasks": [{"title": "Only in v2"}],
        "deadlines": [],
    }
    v2 = ok(admin.put(f"/admin/matter-templates/{tid}", json=second_body), 201)
    assert v2["version"] == 2
    assert ok(admin.get(f"/cases/{first['id']}"))["tags"] == ["injury", "intake"]
    assert "Only in v2" not in _tasks(admin, first["id"])
    second = ok(admin.post("/cases", json={"title": "v2", "template_id": tid}), 201)
    assert second["template_version"] == 2 and second["tags"] == ["v2"]
    assert set(_tasks(admin, second["id"])) == {"Only in v2"}
    older = ok(
        admin.post(
            "/cases",
            json={
                "title": "v1 again",
                "template_id": tid,
                "template_version": 1,
                "trigger_dates": {"service": "2026-10-01"},
            },
        ),
        201,
    )
    assert older["template_version"] == 1 and "Intake interview" in _tasks(admin, older["id"])
    assert ok(admin.get(f"/matter-templates/{tid}"))["version"] == 2
    assert ok(admin.get(f"/matter-templates/{tid}/versions/1"))["definition"]["tags"] == ["injury", "intake"]


def test_a_refused_case_leaves_nothing_behind(api: Api, admin: httpx.Client, template) -> None:
    """A template part that fails (here the trigger date is missing, or a custom field value the
    field refuses) refuses the whole request: no case, no task, no event."""
    body, title = template["body"], unique("Refused ")
    missing = admin.post("/cases", json={"title": title, "template_id": body["id"]})
    assert "trigger_dates.service" in details(api_error(missing, 422, "VALIDATION_ERROR"))
    wrong = admin.post(
        "/cases",
        json={
            "title": title,
            "template_id": body["id"],
            "trigger_dates": {"service": "2026-12-01"},
            "custom_fields": {template["field"]: 5},
        },
    )
    assert f"custom_fields.{template['field']}" in details(api_error(wrong, 422, "VALIDATION_ERROR"))
    assert ok(admin.get("/cases", params={"search": title.split()[-1]})) == []
    unknown = admin.post("/cases", json={"title": title, "template_id": "no-such-template"})
    assert "template_id" in details(api_error(unknown, 404, "NOT_FOUND"))
    # A version past the column's range is invalid, not a database error (found by the fuzzer).
    huge = admin.post("/cases", json={"title": title, "template_id": body["id"], "template_version": 2**31})
    assert "template_version" in details(api_error(huge, 422, "VALIDATION_ERROR"))


def test_templates_are_checked_and_only_administrators_write_them(
    api: Api, admin: httpx.Client, template
) -> None:
    bad = {
        "id": unique("bad-"),
        "name": "Bad",
        "parties": [{"role": "client", "contact_id": "con_nobody"}],
        "deadlines": [{"rule_set": "frcp", "trigger": "no_such_trigger"}],
        "tasks": [{"title": "x", "assignee": "user_nobody"}],
        "documents": ["doc_nobody"],
    }
    # An invalid value (a trigger the rule set does not have) is 422; with it fixed, what names
    # nothing is 404, each field named (docs/api-conventions.md#references).
    error = api_error(admin.post("/admin/matter-templates", json=bad), 422, "VALIDATION_ERROR")
    assert set(details(error)) == {"deadlines[0].trigger"}
    bad["deadlines"] = [{"rule_set": "frcp", "trigger": "service"}]
    error = api_error(admin.post("/admin/matter-templates", json=bad), 404, "NOT_FOUND")
    assert set(details(error)) == {"parties[0].contact_id", "tasks[0].assignee", "documents[0]"}
    api_error(admin.post("/admin/matter-templates", json=template["body"]), 409, "CONFLICT")
    _, token = api.make_user("attorney")
    with api.client(token=token) as lawyer:
        assert template["body"]["id"] in [t["id"] for t in ok(lawyer.get("/matter-templates"))]
        assert (
            lawyer.post("/admin/matter-templates", json={**template["body"], "id": unique("x-")}).status_code
            == 403
        )
