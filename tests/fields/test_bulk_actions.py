"""Bulk actions (issue 27, item 6): `POST /cases/bulk` over many cases as a job; each case
succeeds or fails on its own, with the reason its own request would give; progress; the changes
emit their events (the audit trail per matter) and keep matter access."""

from __future__ import annotations

import httpx

from tests.support.assertions import api_error, details, ok
from tests.support.factories import new_case, unique
from tests.support.servers import Api
from tests.support.waiting import wait_until


def _run(client: httpx.Client, action: dict, case_ids: list[str]) -> dict:
    r = client.post("/cases/bulk", json={"action": action, "case_ids": case_ids})
    assert r.status_code == 202, r.text
    job = r.json()["data"]
    assert r.headers["Location"].endswith(f"/cases/bulk/{job['id']}")
    assert job["total"] == len(dict.fromkeys(case_ids)) and job["status"] in (
        "pending",
        "running",
        "succeeded",
    )

    def finished() -> dict | None:
        now = ok(client.get(f"/cases/bulk/{job['id']}"))
        return now if now["status"] in ("succeeded", "failed") else None

    return wait_until(finished, timeout=30)


def _outcomes(job: dict) -> dict[str, tuple[str, str | None]]:
    return {r["case_id"]: (r["outcome"], (r["error"] or {}).get("code")) for r in job["results"]}


def test_a_status_move_succeeds_or_fails_per_case(api: Api, admin: httpx.Client) -> None:
    active = [new_case(admin) for _ in range(3)]
    intake = new_case(admin, status="intake")
    ok(admin.patch(f"/cases/{intake['id']}", json={"status": "closed"}))  # closed cannot move to pending
    ids = [c["id"] for c in active] + [intake["id"], "case_does_not_exist"]
    job = _run(admin, {"type": "status", "status": "pending"}, ids)
    assert (job["status"], job["processed"], job["succeeded"], job["failed"]) == ("succeeded", 5, 3, 2)
    assert [r["case_id"] for r in job["results"]] == ids
    outcomes = _outcomes(job)
    assert all(outcomes[c["id"]] == ("succeeded", None) for c in active)
    assert outcomes[intake["id"]] == ("failed", "INVALID_STATUS_TRANSITION")
    assert outcomes["case_does_not_exist"] == ("failed", "NOT_FOUND")
    for case in active:
        assert ok(admin.get(f"/cases/{case['id']}"))["status"] == "pending"
        (moved,) = api.events("case.status_changed", case_id=case["id"])
        assert (moved["from"], moved["to"]) == ("active", "pending")
    entries = ok(admin.get(f"/cases/{active[0]['id']}/audit"))
    assert any(e["action"] == "case.status_changed" for e in entries)


def test_assign_tag_and_set_a_custom_field(admin: httpx.Client, api: Api) -> None:
    user, _ = api.make_user("paralegal")
    field = unique("stage")
    ok(
        admin.post(
            "/admin/custom-fields",
            json={"name": field, "label": "Stage", "field_type": "single_choice", "choices": ["a", "b"]},
        ),
        201,
    )
    cases = [new_case(admin, tags=["Keep", "old"]) for _ in range(2)]
    ids = [c["id"] for c in cases]
    assert _run(admin, {"type": "assign", "user_id": user["id"]}, ids)["succeeded"] == 2
    assert _run(admin, {"type": "tag", "add": ["urgent", "keep"], "remove": ["OLD"]}, ids)["succeeded"] == 2
    job = _run(admin, {"type": "set_custom_field", "name": field, "value": "b"}, ids)
    assert job["succeeded"] == 2
    for case_id in ids:
        case = ok(admin.get(f"/cases/{case_id}"))
        assert case["assigned_to"] == [user["id"]]
        assert case["tags"] == ["Keep", "urgent"]
        assert case["custom_fields"] == {field: "b"}
    wrong = _run(admin, {"type": "set_custom_field", "name": field, "value": "z"}, ids[:1])
    (result,) = wrong["results"]
    assert result["outcome"] == "failed" and result["error"]["code"] == "VALIDATION_ERROR"
    assert result["error"]["details"][0]["field"] == f"custom_fields.{field}"


def test_tags_past_a_matters_limit_fail_that_matter_with_the_rule(admin: httpx.Client) -> None:
    """A matter holds at most 50 tags (its PATCH says so with a 422): a bulk tag that would take
    one past it fails that matter with the same refusal, and the others get their tags."""
    full = new_case(admin)
    ok(admin.patch(f"/cases/{full['id']}", json={"tags": [f"t{n}" for n in range(49)]}))
    empty = new_case(admin)
    job = _run(admin, {"type": "tag", "add": ["x1", "x2", "x3"]}, [full["id"], empty["id"]])
    assert _outcomes(job) == {full["id"]: ("failed", "VALIDATION_ERROR"), empty["id"]: ("succeeded", None)}
    assert len(ok(admin.get(f"/cases/{full['id']}"))["tags"]) == 49
    assert ok(admin.get(f"/cases/{empty['id']}"))["tags"] == ["x1", "x2", "x3"]


def test_matter_access_is_kept(api: Api, admin: httpx.Client) -> None:
    """A caller's job changes only the cases the caller may change: a restricted case it cannot
    see fails as not found, like its own request would."""
    _, token = api.make_user("attorney")
    hidden = new_case(admin, access="restricted")
    with api.client(token=token) as lawyer:
        mine = ok(lawyer.post("/cases", json={"title": unique("Mine ")}), 201)
        job = _run(lawyer, {"type": "status", "status": "on_hold"}, [mine["id"], hidden["id"]])
        assert _outcomes(job) == {mine["id"]: ("succeeded", None), hidden["id"]: ("failed", "NOT_FOUND")}
        assert ok(admin.get(f"/cases/{hidden['id']}"))["status"] == "active"
        # Another caller's job is not found; an administrator sees it.
        _, other_token = api.make_user("attorney")
        with api.client(token=other_token) as stranger:
            api_error(stranger.get(f"/cases/bulk/{job['id']}"), 404, "NOT_FOUND")
        assert ok(admin.get(f"/cases/bulk/{job['id']}"))["id"] == job["id"]
    with api.client(token=api.make_user("viewer")[1]) as viewer:
        assert (
            viewer.post(
                "/cases/bulk",
                json={"action": {"type": "status", "status": "closed"}, "case_ids": [hidden["id"]]},
            ).status_code
            == 403
        )


def test_requests_are_checked_before_the_job(admin: httpx.Client) -> None:
    too_many = admin.post(
        "/cases/bulk",
        json={
            "action": {"type": "status", "status": "closed"},
            "case_ids": [f"case_{i}" for i in range(1001)],
        },
    )
    assert "case_ids" in details(api_error(too_many, 422, "VALIDATION_ERROR"))
    nobody = admin.post(
        "/cases/bulk", json={"action": {"type": "assign", "user_id": "user_nobody"}, "case_ids": ["case_x"]}
    )
    assert "action.user_id" in details(api_error(nobody, 404, "NOT_FOUND"))
    no_field = admin.post(
        "/cases/bulk",
        json={
            "action": {"type": "set_custom_field", "name": "no_such_field", "value": 1},
            "case_ids": ["case_x"],
        },
    )
    assert "action.name" in details(api_error(no_field, 404, "NOT_FOUND"))
    unknown = admin.post("/cases/bulk", json={"action": {"type": "explode"}, "case_ids": ["case_x"]})
    api_error(unknown, 422, "VALIDATION_ERROR")


def test_a_large_job_reports_progress(admin: httpx.Client) -> None:
    tag = unique("batch")
    ids = [new_case(admin)["id"] for _ in range(40)]
    job = _run(admin, {"type": "tag", "add": [tag]}, ids)
    assert (job["processed"], job["succeeded"], job["failed"]) == (40, 40, 0)
    listed = admin.get("/cases", params={"tags": tag, "limit": 100})
    assert {c["id"] for c in ok(listed)} == set(ids)
