"""The audit trail from the outside: what requests leave in it (who, from where, under which
request id), and the two ways to read it, `GET /admin/audit` and `GET /cases/{id}/audit`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from casefile.audit.hashing import content_hash
from tests.support.assertions import api_error, auth_error, details, ok
from tests.support.factories import new_case, unique, upload
from tests.support.servers import Api
from tests.support.waiting import wait_until

AGENT = "audit-tests/1.0"


def trail(admin: httpx.Client, **params: Any) -> list[dict[str, Any]]:
    return list(ok(admin.get("/admin/audit", params={"limit": 100, **params})))


def one(entries: list[dict[str, Any]], action: str) -> dict[str, Any]:
    found = [e for e in entries if e["action"] == action]
    assert len(found) == 1, (action, entries)
    return found[0]


def me(client: httpx.Client) -> str:
    return str(ok(client.get("/users/me"))["id"])


def test_create_update_delete_are_recorded_with_actor_address_and_request_id(api: Api) -> None:
    with api.client(token=api.admin_token, headers={"User-Agent": AGENT}) as admin:
        admin_id = me(admin)
        created = admin.post("/cases", json={"title": unique("Audited "), "case_number": unique("AU-")})
        case_id = ok(created, 201)["id"]
        updated = admin.patch(f"/cases/{case_id}", json={"description": "changed"})
        ok(updated)
        deleted = admin.delete(f"/cases/{case_id}")
        ok(deleted)
        entries = trail(admin, case_id=case_id)
    for action, response in (("case.created", created), ("case.updated", updated), ("case.deleted", deleted)):
        entry = one(entries, action)
        assert entry["actor_type"] == "user" and entry["actor_id"] == admin_id == entry["user_id"]
        assert entry["ip"] == "127.0.0.1" and entry["user_agent"] == AGENT
        assert entry["request_id"] == response.headers["x-request-id"]
        assert entry["resource_type"] == "case" and entry["resource_id"] == case_id
        assert entry["outcome"] == "success" and len(entry["hash"]) == 64
    assert one(entries, "case.updated")["details"]["data"]["changes"]["description"]["to"] == "changed"


def test_an_api_key_is_the_actor_and_its_creator_the_user(api: Api, admin: httpx.Client) -> None:
    key = api.make_key(["read:cases", "write:cases"])
    with api.client(api_key=key["key"]) as client:
        case_id = ok(client.post("/cases", json={"title": "By key", "case_number": unique("K-")}), 201)["id"]
    entry = one(trail(admin, case_id=case_id), "case.created")
    assert entry["actor_type"] == "api_key" and entry["actor_id"] == key["id"]
    assert entry["user_id"] == me(admin)


def test_sign_ins_and_failed_sign_ins_are_recorded(api: Api, admin: httpx.Client) -> None:
    user, _ = api.make_user("paralegal")
    with api.client(headers={"User-Agent": AGENT}) as anonymous:
        failed = anonymous.post("/auth/login", json={"email": user["email"], "password": "wrong-password-1"})
        auth_error(failed, 401, "AUTH_004")
    entry = next(
        e
        for e in trail(admin, action="auth.login_failed")
        if e["request_id"] == failed.headers["x-request-id"]
    )
    assert entry["outcome"] == "failed" and entry["resource_id"] == user["id"]
    assert entry["details"]["email"] == user["email"] and entry["user_agent"] == AGENT
    assert entry["actor_id"] is None and "wrong-password-1" not in str(entry)
    signed_in = trail(admin, action="auth.login", actor_id=user["id"])
    assert signed_in and signed_in[0]["user_id"] == user["id"] and signed_in[0]["outcome"] == "success"


def test_reads_searches_and_downloads_are_recorded(api: Api) -> None:
    with api.client(token=api.admin_token) as admin:
        word = unique("zaudit")
        case = new_case(admin, title=f"Read {word}")
        document = ok(upload(admin, case["id"]), 201)
        read = admin.get(f"/cases/{case['id']}")
        ok(read)
        ok(admin.get(f"/documents/{document['id']}"))
        content = admin.get(f"/documents/{document['id']}/content")
        assert content.status_code == 200
        ok(admin.get("/cases", params={"search": word}))
        entries = trail(admin, case_id=case["id"])
        searches = trail(admin, action="search.query", actor_id=me(admin))
    assert one(entries, "case.read")["request_id"] == read.headers["x-request-id"]
    assert one(entries, "document.read")["resource_id"] == document["id"]
    download = one(entries, "document.download")
    assert (
        download["request_id"] == content.headers["x-request-id"]
        and download["resource_id"] == document["id"]
    )
    assert any(e["details"].get("words") == [word] for e in searches)


def test_a_refused_read_of_a_case_is_recorded_as_denied(api: Api, admin: httpx.Client) -> None:
    user, token = api.make_user("attorney")
    missing = "case_" + unique("nonexistent")
    with api.client(token=token) as client:
        refused = client.get(f"/cases/{missing}/audit")
    api_error(refused, 404, "NOT_FOUND")
    entry = one(trail(admin, case_id=missing), "audit.read")
    assert entry["outcome"] == "denied" and entry["user_id"] == user["id"] and entry["case_id"] == missing
    assert entry["request_id"] == refused.headers["x-request-id"]


def test_a_forbidden_change_of_a_case_is_recorded_as_denied(api: Api, admin: httpx.Client) -> None:
    user, token = api.make_user("viewer")
    case = new_case(admin)
    with api.client(token=token) as viewer:
        auth_error(viewer.patch(f"/cases/{case['id']}", json={"title": "no"}), 403, "AUTH_010")
    entry = one(trail(admin, case_id=case["id"]), "case.update")
    assert entry["outcome"] == "denied" and entry["actor_id"] == user["id"]


def test_entries_are_linked_in_the_log_and_their_hash_can_be_recomputed(
    api: Api, admin: httpx.Client
) -> None:
    new_case(admin)
    entries = wait_until(
        lambda: (found := trail(admin, limit=20)) and all(e["sequenced"] for e in found[5:]) and found
    )
    assert [e["id"] for e in entries] == sorted((e["id"] for e in entries), reverse=True)  # newest first
    by_seq = {e["seq"]: e for e in entries if e["sequenced"]}
    linked = [e for seq, e in by_seq.items() if seq - 1 in by_seq]
    assert linked and all(e["prev_hash"] == by_seq[e["seq"] - 1]["hash"] for e in linked)
    for entry in entries:
        assert content_hash(entry) == entry["hash"]


def test_admin_list_filters_and_pages_with_a_cursor(api: Api, admin: httpx.Client) -> None:
    case = new_case(admin, client_name=None)  # a client would add its party's entry
    for _ in range(4):
        ok(admin.get(f"/cases/{case['id']}"))
    everything = trail(admin, case_id=case["id"])
    assert len(everything) == 5  # created, and four reads
    pages, cursor = [], None
    while True:
        response = admin.get(
            "/admin/audit",
            params={"case_id": case["id"], "limit": 2, **({"cursor": cursor} if cursor else {})},
        )
        pages.append(ok(response))
        cursor = response.json()["meta"]["pagination"]["next_cursor"]
        if cursor is None:
            break
    assert [len(p) for p in pages] == [2, 2, 1]
    assert [e["id"] for p in pages for e in p] == [e["id"] for e in everything]
    reads = trail(admin, case_id=case["id"], action="case.read")
    assert len(reads) == 4
    first_read = min(datetime.fromisoformat(e["at"]) for e in reads)
    later = trail(admin, case_id=case["id"], since=(first_read + timedelta(milliseconds=1)).isoformat())
    assert all(datetime.fromisoformat(e["at"]) > first_read for e in later) and len(later) < 5
    before = trail(admin, case_id=case["id"], until=datetime.now(UTC).isoformat())
    assert len(before) == 5
    api_error(admin.get("/admin/audit", params={"cursor": "not-a-cursor"}), 422, "VALIDATION_ERROR")
    # Only a date *and* time is a time (pydantic alone would read `0` as 1970 and a bare date as
    # midnight); one that leaves the calendar once moved to UTC is refused, not a 500.
    odd = ("yesterday", "0", "-1", "2024-01-31", "9999-12-31T23:59:59-23:00", "0001-01-01T00:00+23:00")
    for since in odd:
        r = admin.get("/admin/audit", params={"since": since})
        assert "since" in details(api_error(r, 422, "VALIDATION_ERROR")), since
        r = admin.get(f"/cases/{case['id']}/audit", params={"until": since})
        assert "until" in details(api_error(r, 422, "VALIDATION_ERROR")), since


def test_only_administrators_read_the_whole_trail(api: Api) -> None:
    _, token = api.make_user("attorney")
    with api.client(token=token) as client:
        auth_error(client.get("/admin/audit"), 403, "AUTH_011")


def test_a_cases_trail_holds_only_that_case(api: Api, admin: httpx.Client) -> None:
    case, other = new_case(admin), new_case(admin)
    ok(admin.get(f"/cases/{other['id']}"))
    response = admin.get(f"/cases/{case['id']}/audit", params={"limit": 10})
    entries = ok(response)
    # Newest first: the case, then its client's party, made with it (docs/api-conventions.md#parties).
    assert [e["action"] for e in entries] == ["party.added", "case.created"]
    assert {e["case_id"] for e in entries} == {case["id"]}
    assert response.json()["meta"]["pagination"]["next_cursor"] is None
    assert ok(admin.get(f"/cases/{case['id']}/audit", params={"action": "case.read"})) == []
    # Reading a case's trail is itself recorded.
    assert len(ok(admin.get(f"/cases/{case['id']}/audit", params={"action": "audit.read"}))) == 2


def test_changes_without_events_are_recorded_without_their_secrets(api: Api, admin: httpx.Client) -> None:
    admin_id = me(admin)
    secret = "whsec-" + unique("s") * 3
    hook = ok(
        admin.post(
            "/admin/webhooks",
            json={
                "name": unique("hook"),
                "url": "http://127.0.0.1:9/hook",
                "events": ["case.created"],
                "secret": secret,
            },
        ),
        201,
    )
    ok(admin.delete(f"/admin/webhooks/{hook['id']}"))
    key = api.make_key(["read:cases"])
    ok(admin.delete(f"/admin/api-keys/{key['id']}"))
    user, _ = api.make_user("viewer")
    ok(admin.patch(f"/users/{user['id']}", json={"name": "Renamed"}))
    ok(admin.delete(f"/users/{user['id']}"))
    ok(admin.patch("/admin/config", json={"uploads": {"max_size_bytes": 123456}}))
    ok(admin.patch("/admin/config", json={"uploads": {"max_size_bytes": None}}))
    entries = trail(admin, actor_id=admin_id)
    expected = {
        "webhook.created": hook["id"],
        "webhook.deleted": hook["id"],
        "api_key.created": key["id"],
        "api_key.revoked": key["id"],
        "user.created": user["id"],
        "user.updated": user["id"],
        "user.deleted": user["id"],
    }
    for action, resource_id in expected.items():
        assert any(e["action"] == action and e["resource_id"] == resource_id for e in entries), action
    configured = [e for e in entries if e["action"] == "config.updated"]
    assert configured[1]["details"]["changes"] == {"uploads": {"max_size_bytes": 123456}}
    recorded = str([e for e in entries if e["resource_id"] in (hook["id"], key["id"])])
    assert secret not in recorded and key["key"] not in recorded
