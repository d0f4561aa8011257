"""ETags and conditional requests on single resources (docs/api-conventions.md#etags): 304 for a
reader who has the current version, 412 for a writer who does not, on every kind of resource."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.support.assertions import api_error, ok
from tests.support.factories import new_case, unique, upload
from tests.support.servers import Api


def test_a_case_read_changed_and_written_over_by_a_stale_version(api: Api, admin: httpx.Client) -> None:
    case = new_case(admin, title="Versioned")
    first = admin.get(f"/cases/{case['id']}")
    tag = first.headers["etag"]
    assert tag.startswith('"') and len(tag) == 34
    # The same version read again: the same tag, and 304 with no body for a reader who has it.
    assert admin.get(f"/cases/{case['id']}").headers["etag"] == tag
    unchanged = admin.get(f"/cases/{case['id']}", headers={"If-None-Match": tag})
    assert unchanged.status_code == 304 and unchanged.content == b"" and unchanged.headers["etag"] == tag
    assert admin.get(f"/cases/{case['id']}", headers={"If-None-Match": '"other"'}).status_code == 200

    # A write naming the current version goes through, and its answer carries the new version,
    # the one a following read has.
    changed = admin.patch(f"/cases/{case['id']}", json={"title": "Renamed"}, headers={"If-Match": tag})
    assert ok(changed)["title"] == "Renamed"
    new_tag = changed.headers["etag"]
    assert new_tag != tag and admin.get(f"/cases/{case['id']}").headers["etag"] == new_tag

    # The stale version: 412 in the error envelope, with the current tag, and nothing written.
    stale = admin.put(f"/cases/{case['id']}", json={"title": "Lost update"}, headers={"If-Match": tag})
    api_error(stale, 412, "PRECONDITION_FAILED")
    assert stale.headers["etag"] == new_tag
    assert ok(admin.get(f"/cases/{case['id']}"))["title"] == "Renamed"
    assert not [e for e in api.events("case.updated", case_id=case["id"]) if e.get("title") == "Lost update"]
    api_error(admin.delete(f"/cases/{case['id']}", headers={"If-Match": tag}), 412, "PRECONDITION_FAILED")
    assert ok(admin.get(f"/cases/{case['id']}"))["id"] == case["id"]

    # `*` and a list naming the current tag match; a write without the header is unconditional.
    assert admin.patch(
        f"/cases/{case['id']}", json={"priority": "high"}, headers={"If-Match": "*"}
    ).is_success
    current = admin.get(f"/cases/{case['id']}").headers["etag"]
    listed = admin.patch(
        f"/cases/{case['id']}", json={"priority": "low"}, headers={"If-Match": f'"nope", {current}'}
    )
    assert ok(listed)["priority"] == "low"
    assert ok(admin.patch(f"/cases/{case['id']}", json={"priority": "urgent"}))["priority"] == "urgent"
    latest = admin.get(f"/cases/{case['id']}").headers["etag"]
    assert admin.delete(f"/cases/{case['id']}", headers={"If-Match": latest}).is_success


def test_another_writer_change_such_as_an_assignment_changes_the_tag(admin: httpx.Client) -> None:
    case = new_case(admin)
    tag = admin.get(f"/cases/{case['id']}").headers["etag"]
    me = ok(admin.get("/users/me"))
    ok(admin.post(f"/cases/{case['id']}/assignees", json={"user_id": me["id"]}))
    stale = admin.patch(f"/cases/{case['id']}", json={"title": "x"}, headers={"If-Match": tag})
    api_error(stale, 412, "PRECONDITION_FAILED")


def _task(admin: httpx.Client) -> tuple[str, dict[str, Any]]:
    case = new_case(admin)
    task = ok(admin.post(f"/cases/{case['id']}/tasks", json={"title": "Draft"}), 201)
    return f"/tasks/{task['id']}", {"title": "Draft two"}


def _note(admin: httpx.Client) -> tuple[str, dict[str, Any]]:
    case = new_case(admin)
    note = ok(admin.post(f"/cases/{case['id']}/notes", json={"body": "First"}), 201)
    return f"/notes/{note['id']}", {"body": "Second"}


def _contact(admin: httpx.Client) -> tuple[str, dict[str, Any]]:
    contact = ok(admin.post("/contacts", json={"name": unique("Contact ")}), 201)
    return f"/contacts/{contact['id']}", {"name": unique("Renamed ")}


def _document(admin: httpx.Client) -> tuple[str, dict[str, Any]]:
    document = ok(upload(admin, new_case(admin)["id"]), 201)
    return f"/documents/{document['id']}", {"title": "Retitled"}


def _user(admin: httpx.Client) -> tuple[str, dict[str, Any]]:
    user = ok(
        admin.post(
            "/users",
            json={"email": unique("u") + "@example.com", "name": "Someone", "password": "User-Passw0rd-123"},
        ),
        201,
    )
    return f"/users/{user['id']}", {"name": "Someone Else"}


@pytest.mark.parametrize("make", [_task, _note, _contact, _document, _user], ids=lambda f: f.__name__[1:])
def test_every_kind_of_resource_has_a_version(
    admin: httpx.Client, make: Callable[[httpx.Client], tuple[str, dict[str, Any]]]
) -> None:
    path, change = make(admin)
    tag = admin.get(path).headers["etag"]
    assert admin.get(path, headers={"If-None-Match": tag}).status_code == 304
    written = admin.patch(path, json=change, headers={"If-Match": tag})
    assert written.status_code == 200, written.text
    # The write's answer is the representation a read gives: its tag is the next If-Match.
    assert written.headers["etag"] == admin.get(path).headers["etag"] != tag
    api_error(admin.patch(path, json=change, headers={"If-Match": tag}), 412, "PRECONDITION_FAILED")


def test_lists_have_no_etag_and_a_hidden_case_is_404_not_412(api: Api, admin: httpx.Client) -> None:
    assert "etag" not in admin.get("/cases").headers
    case = new_case(admin, access="restricted")
    _, token = api.make_user("attorney")
    with api.client(token=token) as stranger:
        refused = stranger.patch(f"/cases/{case['id']}", json={"title": "x"}, headers={"If-Match": '"a"'})
    api_error(refused, 404, "NOT_FOUND")
