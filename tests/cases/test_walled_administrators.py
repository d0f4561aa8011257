"""An administrator walled off from a matter sees nothing of it in the administration views
(docs/api-conventions.md#administrators-behind-walls): the audit trail, webhook deliveries and the
trash leave it out, and their item routes answer 404 as for a missing item. Another
administrator, not walled, sees all of it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.assertions import api_error, ok
from tests.support.factories import new_case, unique
from tests.support.receivers import Receiver
from tests.support.servers import Api
from tests.support.waiting import wait_until

from .test_existence_oracle import trail


@pytest.fixture
def hooks(admin: httpx.Client) -> Iterator[list[str]]:
    """Webhooks a test registered; deleted afterwards so later tests' receivers get nothing."""
    made: list[str] = []
    yield made
    for hook_id in made:
        admin.delete(f"/admin/webhooks/{hook_id}")


@pytest.fixture
def walled(api: Api) -> Iterator[tuple[httpx.Client, dict[str, Any]]]:
    user, token = api.make_user("admin")
    with api.client(token=token) as client:
        yield client, user


def _wall(admin: httpx.Client, case_id: str, user: dict[str, Any]) -> None:
    walls = [{"subject_type": "user", "subject_id": user["id"], "reason": "acted for the other side"}]
    ok(admin.put(f"/cases/{case_id}/access", json={"access": "firm", "grants": [], "walls": walls}))


def test_the_audit_trail_leaves_the_walled_matter_out(
    admin: httpx.Client, walled: tuple[httpx.Client, dict[str, Any]]
) -> None:
    client, user = walled
    case = new_case(admin)
    _wall(admin, case["id"], user)
    ok(admin.patch(f"/cases/{case['id']}", json={"description": "Confidential merger with Falcon"}))

    seen = trail(admin, case_id=case["id"])
    assert any(e["action"] == "case.updated" for e in seen)
    assert trail(client, case_id=case["id"]) == []  # as for a case that does not exist
    assert trail(client, case_id="case_01m8es0bnj92z7a9538xb428hg") == []
    updates = trail(client, action="case.updated", since=seen[-1]["at"])
    assert case["id"] not in {e["case_id"] for e in updates}
    assert "Falcon" not in str(updates)

    # The log's inclusion proof shows its entry: 404 for an entry about the walled matter.
    [entry] = [e for e in seen if e["action"] == "case.updated"]
    wait_until(lambda: trail(admin, case_id=case["id"], action="case.updated")[0]["seq"] is not None)
    assert ok(admin.get(f"/audit/entries/{entry['id']}/inclusion-proof"))["entry"]["id"] == entry["id"]
    hidden = api_error(client.get(f"/audit/entries/{entry['id']}/inclusion-proof"), 404, "NOT_FOUND")
    missing = api_error(
        client.get("/audit/entries/aud_01m8es0bnj92z7a9538xb428hg/inclusion-proof"), 404, "NOT_FOUND"
    )
    assert hidden["message"] == missing["message"] == "Audit entry not found"

    # Each refusal is recorded as denied, under the walled administrator.
    denied = [e for e in trail(admin, case_id=case["id"], actor_id=user["id"]) if e["outcome"] == "denied"]
    assert len(denied) >= 1


def test_deliveries_of_the_walled_matter_do_not_exist_for_the_walled_administrator(
    admin: httpx.Client, walled: tuple[httpx.Client, dict[str, Any]], hooks: list[str], receiver: Receiver
) -> None:
    client, user = walled
    hook = ok(
        admin.post(
            "/admin/webhooks",
            json={
                "name": unique("hook"),
                "url": receiver.url,
                "events": ["case.updated"],
                "secret": "s" * 32,
            },
        ),
        201,
    )
    hooks.append(hook["id"])
    open_case, walled_case = new_case(admin), new_case(admin)
    _wall(admin, walled_case["id"], user)
    for case in (open_case, walled_case):
        ok(admin.patch(f"/cases/{case['id']}", json={"description": f"Merger talks {case['id']}"}))

    def deliveries(reader: httpx.Client) -> dict[str, dict[str, Any]]:
        listed = ok(reader.get(f"/admin/webhooks/{hook['id']}/deliveries"))
        return {d["id"]: ok(reader.get(f"/admin/deliveries/{d['id']}")) for d in listed}

    everything = wait_until(lambda: len(found := deliveries(admin)) == 2 and found)
    by_case = {d["data"]["case_id"]: d["id"] for d in everything.values()}
    hidden_id, shown_id = by_case[walled_case["id"]], by_case[open_case["id"]]

    assert set(deliveries(client)) == {shown_id}
    assert hidden_id not in {d["id"] for d in ok(client.get("/admin/deliveries", params={"limit": 100}))}
    for response in (
        client.get(f"/admin/deliveries/{hidden_id}"),
        client.post(f"/admin/deliveries/{hidden_id}/retry"),
        client.get("/admin/deliveries/dlv_01m8es0bnj92z7a9538xb428hg"),
    ):
        assert api_error(response, 404, "NOT_FOUND")["message"] == "Delivery not found"
    assert hidden_id in {d["id"] for d in ok(admin.get("/admin/deliveries", params={"limit": 100}))}


def test_the_trash_and_holds_of_the_walled_matter_do_not_exist_for_the_walled_administrator(
    admin: httpx.Client, walled: tuple[httpx.Client, dict[str, Any]]
) -> None:
    client, user = walled
    held, trashed = new_case(admin), new_case(admin)
    for case in (held, trashed):
        _wall(admin, case["id"], user)
    hold = ok(admin.post(f"/cases/{held['id']}/holds", json={"reason": "litigation expected"}), 201)
    ok(admin.delete(f"/cases/{trashed['id']}"))

    def trash(reader: httpx.Client) -> set[str]:
        return {i["id"] for i in ok(reader.get("/admin/trash", params={"limit": 100}))}

    assert trashed["id"] in trash(admin) and trashed["id"] not in trash(client)
    for response in (
        client.post(f"/admin/trash/{trashed['id']}/restore"),
        client.delete(f"/admin/trash/{trashed['id']}"),
        client.post("/admin/trash/case_01m8es0bnj92z7a9538xb428hg/restore"),
    ):
        assert api_error(response, 404, "NOT_FOUND")["message"] == "Not in the trash"
    assert trashed["id"] in trash(admin)  # neither restored nor purged

    refused = api_error(client.post(f"/holds/{hold['id']}/release"), 404, "NOT_FOUND")
    assert refused == api_error(
        client.post("/holds/hold_01m8es0bnj92z7a9538xb428hg/release"), 404, "NOT_FOUND"
    )
    assert ok(admin.get(f"/cases/{held['id']}/holds"))[0]["released_at"] is None

    # Each refusal is recorded as denied, under the action the request asked for.
    actions = [
        e["action"]
        for case in (held, trashed)
        for e in trail(admin, case_id=case["id"], actor_id=user["id"])
        if e["outcome"] == "denied"
    ]
    assert sorted(actions) == ["hold.release", "trash.purge", "trash.restore"]
