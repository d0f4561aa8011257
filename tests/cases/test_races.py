"""Cases under concurrent requests: real requests at once from threads, against each database
(PostgreSQL is where they raced; SQLite serialises writers). Every change reads the row it checks
with a lock (`db.get_or_404` in a write transaction), so conflicting changes queue and the second
one sees the first."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import httpx

from tests.support.assertions import ok
from tests.support.expected import LIFECYCLE
from tests.support.factories import new_case
from tests.support.servers import Api

CASES = 20


def at_once(api: Api, calls: list[Callable[[httpx.Client], httpx.Response]]) -> list[httpx.Response]:
    """Run every call in a thread of its own, each with a client of its own, all started together."""
    token = api.admin_token
    clients = [api.client(token=token) for _ in calls]
    try:
        for client in clients:  # open the connections first, so the requests themselves race
            ok(client.get("/users/me"))
        with ThreadPoolExecutor(len(calls)) as pool:
            return list(pool.map(lambda pair: pair[0](pair[1]), zip(calls, clients, strict=True)))
    finally:
        for client in clients:
            client.close()


def test_conflicting_status_moves_at_once_leave_a_legal_history(api: Api, admin: httpx.Client) -> None:
    # closed -> active and closed -> archived are both allowed, but whichever comes second is then
    # a move from active to archived or from archived to active, which the lifecycle refuses.
    cases = [new_case(admin, status="closed") for _ in range(CASES)]

    def move(case_id: str, status: str) -> Callable[[httpx.Client], httpx.Response]:
        return lambda c: c.patch(f"/cases/{case_id}", json={"status": status})

    calls = [move(case["id"], status) for case in cases for status in ("active", "archived")]
    responses = at_once(api, calls)

    for index, case in enumerate(cases):
        pair = responses[2 * index : 2 * index + 2]
        assert sorted(r.status_code for r in pair) == [200, 409], [r.text for r in pair]
        winner = next(r for r in pair if r.status_code == 200).json()["data"]["status"]
        moves = api.events("case.status_changed", case_id=case["id"])
        assert [(m["from"], m["to"]) for m in moves] == [("closed", winner)]
        assert ok(admin.get(f"/cases/{case['id']}"))["status"] == winner


def test_status_history_is_a_legal_chain_under_many_concurrent_moves(api: Api, admin: httpx.Client) -> None:
    case = new_case(admin, status="active")
    targets = ["pending", "on_hold", "active", "closed", "archived", "pending", "active", "on_hold"]
    responses = at_once(
        api, [lambda c, s=s: c.patch(f"/cases/{case['id']}", json={"status": s}) for s in targets]
    )
    assert {r.status_code for r in responses} <= {200, 409}, [r.text for r in responses]
    moves = api.events("case.status_changed", case_id=case["id"])
    # A move to the status the case already has is a 200 that changes nothing and emits nothing.
    assert 1 <= len(moves) <= sum(r.status_code == 200 for r in responses)
    current = "active"
    for m in moves:
        assert m["from"] == current and m["to"] in LIFECYCLE[current], moves
        current = m["to"]
    assert ok(admin.get(f"/cases/{case['id']}"))["status"] == current


def test_four_deletes_at_once_delete_once_and_emit_once(api: Api, admin: httpx.Client) -> None:
    cases = [new_case(admin) for _ in range(CASES // 2)]

    def delete(case_id: str) -> Callable[[httpx.Client], httpx.Response]:
        return lambda c: c.delete(f"/cases/{case_id}")

    responses = at_once(api, [delete(case["id"]) for case in cases for _ in range(4)])
    for index, case in enumerate(cases):
        statuses = sorted(r.status_code for r in responses[4 * index : 4 * index + 4])
        assert statuses == [200, 404, 404, 404], statuses
        assert len(api.events("case.deleted", case_id=case["id"])) == 1


def test_patch_and_delete_at_once_answer_200_or_404(api: Api, admin: httpx.Client) -> None:
    cases = [new_case(admin) for _ in range(CASES // 2)]
    calls: list[Callable[[httpx.Client], httpx.Response]] = []
    for case in cases:
        calls.append(lambda c, i=case["id"]: c.patch(f"/cases/{i}", json={"priority": "low"}))
        calls.append(lambda c, i=case["id"]: c.delete(f"/cases/{i}"))
    responses = at_once(api, calls)
    for index in range(len(cases)):
        patched, deleted = responses[2 * index], responses[2 * index + 1]
        assert patched.status_code in (200, 404), patched.text
        assert deleted.status_code == 200, deleted.text
    for case in cases:
        ok_gone = admin.get(f"/cases/{case['id']}")
        assert ok_gone.status_code == 404


def test_the_same_assignee_added_at_once_is_assigned_once(api: Api, admin: httpx.Client) -> None:
    user, _ = api.make_user("attorney")
    cases = [new_case(admin) for _ in range(CASES // 4)]

    def assign(case_id: str) -> Callable[[httpx.Client], httpx.Response]:
        return lambda c: c.post(f"/cases/{case_id}/assignees", json={"user_id": user["id"]})

    responses = at_once(api, [assign(case["id"]) for case in cases for _ in range(4)])
    assert {r.status_code for r in responses} == {200}, [r.text for r in responses if r.status_code != 200]
    for r in responses:
        assert r.json()["data"]["assigned_to"].count(user["id"]) == 1
    for case in cases:
        assert ok(admin.get(f"/cases/{case['id']}"))["assigned_to"] == [user["id"]]
        assert len(api.events("case.assigned", case_id=case["id"])) == 1
