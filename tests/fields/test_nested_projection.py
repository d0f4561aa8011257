"""`fields=` with one level of nesting (issue 27, item 7): `assignees{id,name}` on lists and on a
single case; unknown names at either level are a VALIDATION_ERROR naming them."""

from __future__ import annotations

import httpx
import pytest

from tests.support.assertions import api_error, ok
from tests.support.factories import new_case, unique
from tests.support.servers import Api


@pytest.fixture(scope="module")
def assigned(api: Api) -> tuple[str, dict, dict]:
    """A case with one assignee, found by a unique title word."""
    user, _ = api.make_user("attorney")
    tag = unique("osprey")
    with api.admin() as admin:
        case = new_case(admin, title=f"{tag} Lease")
        ok(admin.post(f"/cases/{case['id']}/assignees", json={"user_id": user["id"]}))
    return tag, case, user


def test_list_keeps_only_the_nested_fields_asked(admin: httpx.Client, assigned) -> None:
    tag, case, user = assigned
    r = admin.get("/cases", params={"search": tag, "fields": "id,title,assignees{id,name}"})
    assert ok(r) == [
        {"id": case["id"], "title": case["title"], "assignees": [{"id": user["id"], "name": user["name"]}]}
    ]


def test_single_case_and_the_whole_nested_object(admin: httpx.Client, assigned) -> None:
    _, case, user = assigned
    one = ok(admin.get(f"/cases/{case['id']}", params={"fields": "id, assignees { name , email }"}))
    assert one == {"id": case["id"], "assignees": [{"name": user["name"], "email": user["email"]}]}
    whole = ok(admin.get(f"/cases/{case['id']}"))
    assert [a["id"] for a in whole["assignees"]] == whole["assigned_to"] == [user["id"]]
    assert set(whole["assignees"][0]) == {"id", "name", "email", "assigned_by", "assigned_at"}


def test_a_case_without_assignees_has_an_empty_list(admin: httpx.Client) -> None:
    case = new_case(admin)
    assert ok(admin.get(f"/cases/{case['id']}", params={"fields": "assignees{id}"})) == {"assignees": []}


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ("id,assignees{id,nope}", "assignees.nope"),
        ("id,nope{id}", "nope"),
        ("title{id}", "title has no sub-fields"),
        ("assignees{id{name}}", "one level of nesting"),
        ("assignees{}", "at least one field"),
        ("assignees{id", "cannot read"),
    ],
)
def test_unknown_or_malformed_names_are_refused(admin: httpx.Client, assigned, fields, named) -> None:
    _, case, _ = assigned
    for response in (
        admin.get("/cases", params={"fields": fields}),
        admin.get(f"/cases/{case['id']}", params={"fields": fields}),
    ):
        error = api_error(response, 422, "VALIDATION_ERROR")
        assert [d["field"] for d in error["details"]] == ["fields"]
        assert named.lower() in error["details"][0]["message"].lower()


def test_other_resources_take_the_same_syntax(admin: httpx.Client, assigned) -> None:
    """A resource with no nested objects refuses braces on its fields, naming the field."""
    error = api_error(admin.get("/tasks", params={"fields": "id,title{x}"}), 422, "VALIDATION_ERROR")
    assert "title" in error["details"][0]["message"]
    assert all(set(t) == {"id"} for t in ok(admin.get("/tasks", params={"fields": "id"})))
