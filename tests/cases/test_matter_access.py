"""Matter access from the outside: who sees which case, through every path that touches one.

One firm, four matters, eight callers. Each matter has one document (with search passages), and
every matter's title, document title and text share the module's word `TAG`, so a single search
shows exactly which matters a caller may see. The table `SEES` is the whole rule set written out
case by case (docs/api-conventions.md#matter-access); every endpoint must agree with it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.support.assertions import api_error, auth_error, details, ok
from tests.support.factories import new_case, unique
from tests.support.indexing import add_document
from tests.support.servers import Api

TAG = unique("zeb")

# The matters:
#   firm:        a firm case, no grants or walls;
#   restricted:  assignee `assignee`; group `team` (member `grouped`, `walled`) has write;
#                `viewer` has read; `walled` is walled off (though in `team`);
#   walled_firm: a firm case with a wall on `paralegal`;
#   admin_wall:  a firm case with a wall on the administrator.
MATTERS = ("firm", "restricted", "walled_firm", "admin_wall")

SEES: dict[str, set[str]] = {
    "admin": {"firm", "restricted", "walled_firm"},
    "assignee": {"firm", "restricted", "walled_firm", "admin_wall"},
    "grouped": {"firm", "restricted", "walled_firm", "admin_wall"},
    "walled": {"firm", "walled_firm", "admin_wall"},
    "paralegal": {"firm", "admin_wall"},
    "viewer": {"firm", "restricted", "walled_firm", "admin_wall"},
    # A key acts as its creator, narrowed: the administrator's key limited to two matters (one of
    # which the administrator is walled off from), the paralegal's key with every permission.
    "admin_key_two_cases": {"restricted"},
    "paralegal_key": {"firm", "admin_wall"},
}

# Who may change each matter they see (`write`): the viewer's role and grant give read only.
WRITES: dict[str, set[str]] = {
    "admin": {"firm", "restricted", "walled_firm"},
    "assignee": {"firm", "restricted", "walled_firm", "admin_wall"},
    "grouped": {"firm", "restricted", "walled_firm", "admin_wall"},
    "walled": {"firm", "walled_firm", "admin_wall"},
    "paralegal": {"firm", "admin_wall"},
    "viewer": set(),
}

# Who may read and change the access settings (`manage`, or an administrator's token).
MANAGES: dict[str, set[str]] = {
    "admin": set(MATTERS),  # even the matter the administrator is walled off from
    "assignee": {"restricted"},
    "admin_key_two_cases": {"restricted"},  # a key acts as its creator, here an administrator
}


@dataclass
class World:
    cases: dict[str, dict[str, Any]]
    documents: dict[str, str]  # matter -> document id
    users: dict[str, dict[str, Any]]
    clients: dict[str, httpx.Client]


@pytest.fixture(scope="module")
def world(search_api: Api) -> Iterator[World]:
    api = search_api
    admin = api.admin()
    users: dict[str, dict[str, Any]] = {}
    clients: dict[str, httpx.Client] = {"admin": admin}
    for name, role in [
        ("assignee", "attorney"),
        ("grouped", "attorney"),
        ("walled", "attorney"),
        ("paralegal", "paralegal"),
        ("viewer", "viewer"),
    ]:
        user, token = api.make_user(role)
        users[name] = user
        clients[name] = api.client(token=token)
    users["admin"] = ok(admin.get("/users/me"))

    cases = {m: new_case(admin, title=f"{m} matter {TAG}") for m in MATTERS}
    documents = {
        m: add_document(
            api, admin, cases[m]["id"], f"{m} memo {TAG}", [f"The {m} memo about {TAG} and the lease terms."]
        ).id
        for m in MATTERS
    }
    team = ok(admin.post("/admin/groups", json={"name": unique("team")}), 201)
    ok(
        admin.put(
            f"/admin/groups/{team['id']}/members",
            json={"user_ids": [users["grouped"]["id"], users["walled"]["id"]]},
        )
    )
    ok(admin.post(f"/cases/{cases['restricted']['id']}/assignees", json={"user_id": users["assignee"]["id"]}))

    def user(name: str) -> dict[str, str]:
        return {"subject_type": "user", "subject_id": users[name]["id"]}

    ok(
        admin.put(
            f"/cases/{cases['restricted']['id']}/access",
            json={
                "access": "restricted",
                "grants": [
                    {"subject_type": "group", "subject_id": team["id"], "level": "write"},
                    {**user("viewer"), "level": "read"},
                ],
                "walls": [{**user("walled"), "reason": "acted for the other side"}],
            },
        )
    )
    ok(
        admin.put(
            f"/cases/{cases['walled_firm']['id']}/access",
            json={"access": "firm", "walls": [user("paralegal")]},
        )
    )
    ok(
        admin.put(
            f"/cases/{cases['admin_wall']['id']}/access", json={"access": "firm", "walls": [user("admin")]}
        )
    )

    admin_key = api.make_key(["*:*"], case_ids=[cases["restricted"]["id"], cases["admin_wall"]["id"]])
    clients["admin_key_two_cases"] = api.client(api_key=admin_key["key"])
    paralegal_key = _key_made_by(api, users["paralegal"], ["*:*"])
    clients["paralegal_key"] = api.client(api_key=paralegal_key)

    yield World(cases, documents, users, clients)
    for client in clients.values():
        client.close()


def _key_made_by(api: Api, user: dict[str, Any], permissions: list[str]) -> str:
    """An API key whose creator is `user`: made by an administrator, then handed to the user in
    the database (the API makes keys for the administrator who asks)."""
    key = api.make_key(permissions)
    api.sql("UPDATE api_keys SET created_by = :user WHERE id = :key", user=user["id"], key=key["id"])
    return str(key["key"])


CALLERS = sorted(SEES)


@pytest.mark.parametrize("caller", CALLERS)
def test_case_reads_follow_the_table(world: World, caller: str) -> None:
    client = world.clients[caller]
    for matter in MATTERS:
        case_id = world.cases[matter]["id"]
        if matter in SEES[caller]:
            assert ok(client.get(f"/cases/{case_id}"))["id"] == case_id
            assert [d["id"] for d in ok(client.get(f"/cases/{case_id}/documents"))] == [
                world.documents[matter]
            ]
        else:
            for path in (f"/cases/{case_id}", f"/cases/{case_id}/documents"):
                error = api_error(client.get(path), 404, "NOT_FOUND")
                assert error["message"] == "Case not found"


@pytest.mark.parametrize("caller", CALLERS)
def test_lists_and_their_totals_hold_only_visible_matters(world: World, caller: str) -> None:
    r = world.clients[caller].get("/cases", params={"search": TAG, "limit": 2})
    listed = ok(r)
    seen = {m for m in MATTERS if world.cases[m]["id"] in {c["id"] for c in listed}}
    assert r.json()["meta"]["pagination"]["total"] == len(SEES[caller])
    assert seen <= SEES[caller] and len(listed) == min(2, len(SEES[caller]))
    everything = ok(world.clients[caller].get("/cases", params={"search": TAG, "limit": 100}))
    assert {m for m in MATTERS if world.cases[m]["id"] in {c["id"] for c in everything}} == SEES[caller]


@pytest.fixture(scope="module")
def stage(world: World) -> tuple[str, str]:
    """A custom field with one value on every matter (set by the assignee, who may write to all
    four), as `cf.<name>=<value>`."""
    name, value = unique("stage_"), unique("Stage ")
    ok(
        world.clients["admin"].post(
            "/admin/custom-fields", json={"name": name, "label": "Stage", "field_type": "text"}
        ),
        201,
    )
    for matter in MATTERS:
        path = f"/cases/{world.cases[matter]['id']}"
        ok(world.clients["assignee"].patch(path, json={"custom_fields": {name: value}}))
    return f"cf.{name}", value


@pytest.mark.parametrize("caller", CALLERS)
def test_a_custom_field_filter_and_its_total_hold_only_visible_matters(
    world: World, stage: tuple[str, str], caller: str
) -> None:
    # The filter's matches come from the value index (access.matter.visible_ids), not `cases`.
    client, (param, value) = world.clients[caller], stage
    r = client.get("/cases", params={param: value, "limit": 2})
    assert r.json()["meta"]["pagination"]["total"] == len(SEES[caller])
    everything = ok(client.get("/cases", params={param: value, "limit": 100}))
    assert {m for m in MATTERS if world.cases[m]["id"] in {c["id"] for c in everything}} == SEES[caller]
    assert len(everything) == len(SEES[caller])
    # With a search, which stays a condition on the cases themselves.
    searched = client.get("/cases", params={param: value, "search": TAG, "limit": 100})
    assert searched.json()["meta"]["pagination"]["total"] == len(SEES[caller])


@pytest.mark.parametrize("caller", CALLERS)
def test_documents_and_their_content_follow_their_case(world: World, caller: str) -> None:
    client = world.clients[caller]
    for matter in MATTERS:
        document_id = world.documents[matter]
        if matter in SEES[caller]:
            assert ok(client.get(f"/documents/{document_id}"))["case_id"] == world.cases[matter]["id"]
            content = client.get(f"/documents/{document_id}/content")
            assert content.status_code == 200 and TAG.encode() in content.content
        else:
            for path in (f"/documents/{document_id}", f"/documents/{document_id}/content"):
                error = api_error(client.get(path), 404, "NOT_FOUND")
                assert error["message"] == "Document not found"


@pytest.mark.parametrize("caller", CALLERS)
def test_search_hits_snippets_and_totals_leave_hidden_matters_out(world: World, caller: str) -> None:
    r = world.clients[caller].get("/search", params={"q": TAG, "limit": 100})
    hits = ok(r)
    case_hits = {h["id"] for h in hits if h["kind"] == "case"}
    document_hits = {h["id"] for h in hits if h["kind"] == "document"}
    assert case_hits == {world.cases[m]["id"] for m in SEES[caller]}
    assert document_hits == {world.documents[m] for m in SEES[caller]}
    assert r.json()["meta"]["pagination"]["total"] == 2 * len(SEES[caller])


@pytest.mark.parametrize("caller", CALLERS)
def test_ask_answers_only_on_visible_matters(world: World, caller: str) -> None:
    client = world.clients[caller]
    for matter in MATTERS:
        r = client.post(
            f"/cases/{world.cases[matter]['id']}/ask", json={"question": f"What is the {matter} memo about?"}
        )
        if matter in SEES[caller]:
            assert ok(r)["question"]
        else:
            api_error(r, 404, "NOT_FOUND")


@pytest.mark.parametrize("caller", sorted(WRITES))
def test_writes_need_write_access(world: World, caller: str) -> None:
    client = world.clients[caller]
    for matter in MATTERS:
        case_id = world.cases[matter]["id"]
        r = client.patch(f"/cases/{case_id}", json={"description": f"edited by {caller}"})
        if matter in WRITES[caller]:
            assert ok(r)["description"] == f"edited by {caller}"
        elif matter in SEES[caller]:
            assert r.status_code == 403, r.text
        else:
            api_error(r, 404, "NOT_FOUND")


def test_a_reader_by_grant_is_refused_a_write_with_the_level_it_lacks(world: World) -> None:
    # The viewer's role already lacks write:cases; an attorney with only a read grant on a
    # restricted case is refused by the case's rule.
    reader = world.clients["grouped"]
    case = new_case(world.clients["admin"], title=unique("reader "))
    ok(
        world.clients["admin"].put(
            f"/cases/{case['id']}/access",
            json={
                "access": "restricted",
                "grants": [
                    {"subject_type": "user", "subject_id": world.users["grouped"]["id"], "level": "read"}
                ],
            },
        )
    )
    assert ok(reader.get(f"/cases/{case['id']}"))["id"] == case["id"]
    error = auth_error(reader.patch(f"/cases/{case['id']}", json={"title": "no"}), 403, "AUTH_012")
    assert error["error_description"] == "This request needs write access to the case"
    auth_error(
        reader.post(f"/cases/{case['id']}/documents", files={"file": ("a.txt", b"text", "text/plain")}),
        403,
        "AUTH_012",
    )


@pytest.mark.parametrize("caller", CALLERS)
def test_access_settings_need_manage(world: World, caller: str) -> None:
    client = world.clients[caller]
    for matter in MATTERS:
        r = client.get(f"/cases/{world.cases[matter]['id']}/access")
        if matter in MANAGES.get(caller, set()):
            assert ok(r)["access"] in ("firm", "restricted")
        elif matter in SEES[caller]:
            assert r.status_code == 403, r.text
        else:
            api_error(r, 404, "NOT_FOUND")


def test_access_settings_read_back_and_announce_changes(search_api: Api, world: World) -> None:
    admin = world.clients["admin"]
    got = ok(admin.get(f"/cases/{world.cases['restricted']['id']}/access"))
    assert got["access"] == "restricted"
    assert {(g["subject_type"], g["level"]) for g in got["grants"]} == {("group", "write"), ("user", "read")}
    assert got["walls"] == [
        {
            "subject_type": "user",
            "subject_id": world.users["walled"]["id"],
            "reason": "acted for the other side",
        }
    ]
    [event] = search_api.events("case.access_changed", case_id=world.cases["restricted"]["id"])
    assert event["from"]["access"] == "firm" and event["to"] == got


def test_access_settings_are_validated(world: World) -> None:
    admin = world.clients["admin"]
    case_id = world.cases["firm"]["id"]
    user = {"subject_type": "user", "subject_id": world.users["viewer"]["id"]}
    error = api_error(
        admin.put(
            f"/cases/{case_id}/access",
            json={
                "access": "restricted",
                "grants": [{**user, "level": "read"}, {**user, "level": "write"}],
                "walls": [{"subject_type": "group", "subject_id": "grp_nope"}],
            },
        ),
        422,
        "VALIDATION_ERROR",
    )
    assert details(error) == {"grants[1]": "This subject is listed twice"}
    # A valid body naming a group that does not exist: 404 naming the field (api-conventions#references).
    error = api_error(
        admin.put(
            f"/cases/{case_id}/access",
            json={"access": "restricted", "walls": [{"subject_type": "group", "subject_id": "grp_nope"}]},
        ),
        404,
        "NOT_FOUND",
    )
    assert details(error) == {"walls[0].subject_id": "No such group"}
    api_error(admin.put(f"/cases/{case_id}/access", json={"access": "secret"}), 422, "VALIDATION_ERROR")
    api_error(
        admin.put(
            f"/cases/{case_id}/access", json={"access": "firm", "grants": [{**user, "level": "owner"}]}
        ),
        422,
        "VALIDATION_ERROR",
    )
    assert ok(admin.get(f"/cases/{case_id}/access"))["access"] == "firm"  # nothing was changed


def test_assigned_to_me_and_a_user_id(world: World) -> None:
    restricted = world.cases["restricted"]["id"]
    mine = ok(world.clients["assignee"].get("/cases", params={"assigned_to": "me", "limit": 100}))
    assert [c["id"] for c in mine] == [restricted]
    assert ok(world.clients["grouped"].get("/cases", params={"assigned_to": "me"})) == []
    theirs = ok(world.clients["admin"].get("/cases", params={"assigned_to": world.users["assignee"]["id"]}))
    assert [c["id"] for c in theirs] == [restricted]
    # The walled user learns nothing about a hidden matter by asking for someone else's cases.
    assert (
        ok(world.clients["walled"].get("/cases", params={"assigned_to": world.users["assignee"]["id"]})) == []
    )


def test_a_key_limited_to_cases_must_name_existing_ones(search_api: Api) -> None:
    with search_api.admin() as admin:
        error = api_error(
            admin.post(
                "/admin/api-keys",
                json={"name": "k", "permissions": ["read:cases"], "case_ids": ["case_nope"]},
            ),
            404,
            "NOT_FOUND",
        )
    assert details(error) == {"case_ids[0]": "No such case"}


def test_a_restricted_default_lets_the_creator_in_and_nobody_else(make_server: Any) -> None:
    server = make_server(default_case_access="restricted")
    _, creator_token = server.make_user("attorney")
    _, colleague_token = server.make_user("attorney")
    with server.client(token=creator_token) as creator, server.client(token=colleague_token) as colleague:
        case = new_case(creator)
        assert case["access"] == "restricted"
        assert ok(creator.get(f"/cases/{case['id']}/access"))["grants"][0]["level"] == "manage"
        api_error(colleague.get(f"/cases/{case['id']}"), 404, "NOT_FOUND")
        firm = new_case(creator, access="firm")
        assert ok(colleague.get(f"/cases/{firm['id']}"))["access"] == "firm"


def test_groups_are_managed_by_administrators(search_api: Api, world: World) -> None:
    admin = world.clients["admin"]
    name = unique("Litigation ")
    group = ok(admin.post("/admin/groups", json={"name": name}), 201)
    assert group["id"].startswith("grp_") and group["member_ids"] == []
    api_error(admin.post("/admin/groups", json={"name": name.upper()}), 422, "VALIDATION_ERROR")
    members = sorted([world.users["viewer"]["id"], world.users["paralegal"]["id"]])
    assert (
        ok(admin.put(f"/admin/groups/{group['id']}/members", json={"user_ids": members}))["member_ids"]
        == members
    )
    error = api_error(
        admin.put(f"/admin/groups/{group['id']}/members", json={"user_ids": ["user_nope"]}),
        404,
        "NOT_FOUND",
    )
    assert details(error) == {"user_ids[0]": "No such user"}
    assert (
        ok(admin.patch(f"/admin/groups/{group['id']}", json={"description": "trial team"}))["description"]
        == "trial team"
    )
    assert group["id"] in [g["id"] for g in ok(admin.get("/admin/groups", params={"limit": 100}))]
    auth_error(world.clients["assignee"].get("/admin/groups"), 403, "AUTH_011")
    ok(admin.delete(f"/admin/groups/{group['id']}"))
    api_error(admin.get(f"/admin/groups/{group['id']}"), 404, "NOT_FOUND")
    assert search_api.events("group.members_changed", group_id=group["id"])


def test_a_deleted_user_leaves_no_grant_or_wall_behind(search_api: Api, world: World) -> None:
    admin = world.clients["admin"]
    leaving, _ = search_api.make_user("paralegal")
    case = new_case(admin, title=unique("leaving "))
    subject = {"subject_type": "user", "subject_id": leaving["id"]}
    ok(
        admin.put(
            f"/cases/{case['id']}/access",
            json={"access": "restricted", "grants": [{**subject, "level": "read"}], "walls": []},
        )
    )
    ok(admin.delete(f"/users/{leaving['id']}"))
    assert ok(admin.get(f"/cases/{case['id']}/access"))["grants"] == []


def test_a_refused_read_of_a_hidden_matter_is_in_the_audit_trail(world: World) -> None:
    restricted = world.cases["restricted"]["id"]
    api_error(world.clients["walled"].get(f"/cases/{restricted}"), 404, "NOT_FOUND")
    entries = ok(
        world.clients["admin"].get(
            "/admin/audit", params={"case_id": restricted, "action": "case.read", "limit": 100}
        )
    )
    refused = [e for e in entries if e["user_id"] == world.users["walled"]["id"]]
    assert refused and {e["outcome"] for e in refused} == {"denied"}
    assert refused[0]["resource_id"] == restricted and refused[0]["request_id"].startswith("req_")
