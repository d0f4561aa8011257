"""Notes on cases and contacts: fields, the edit history, listing, events, and access through the
case or the contact permissions."""

from __future__ import annotations

import re

import httpx

from tests.support.assertions import api_error, auth_error, details, ok
from tests.support.factories import new_case, unique
from tests.support.servers import Api


def test_a_note_on_a_case_and_its_history(api: Api, admin: httpx.Client) -> None:
    case = new_case(admin)
    me = ok(admin.get("/users/me"))
    note = ok(
        admin.post(f"/cases/{case['id']}/notes", json={"body": "Called opposing counsel.", "pinned": True}),
        201,
    )
    assert re.match(r"^note_[0-9a-z]{26}$", note["id"])
    assert note["case_id"] == case["id"] and note["contact_id"] is None and note["author_id"] == me["id"]
    assert note["body"] == "Called opposing counsel." and note["pinned"] is True
    assert note["format"] == "plain" and note["version"] == 1
    assert ok(admin.get(f"/notes/{note['id']}")) == note
    [event] = api.events("note.created", note_id=note["id"])
    assert event["case_id"] == case["id"] and "body" not in event  # the text may be privileged

    markdown = "# Call\n\n- **agreed** to extend"
    edited = ok(admin.patch(f"/notes/{note['id']}", json={"body": markdown, "format": "markdown"}))
    assert edited["body"] == markdown and edited["format"] == "markdown" and edited["version"] == 2
    ok(admin.patch(f"/notes/{note['id']}", json={"pinned": False}))
    unchanged = ok(admin.patch(f"/notes/{note['id']}", json={"pinned": False}))
    assert unchanged["version"] == 3  # nothing changed: no new version

    history = ok(admin.get(f"/notes/{note['id']}/history", params={"order": "asc"}))
    assert [(v["version"], v["body"], v["format"], v["pinned"]) for v in history] == [
        (1, "Called opposing counsel.", "plain", True),
        (2, markdown, "markdown", True),
        (3, markdown, "markdown", False),
    ]
    assert all(v["edited_by"] == me["id"] for v in history)
    [updated] = [e for e in api.events("note.updated", note_id=note["id"]) if e["version"] == 2]
    assert updated["changed"] == ["body", "format"]

    assert ok(admin.delete(f"/notes/{note['id']}")) == {"id": note["id"], "deleted": True}
    api_error(admin.get(f"/notes/{note['id']}"), 404, "NOT_FOUND")
    api_error(admin.get(f"/notes/{note['id']}/history"), 404, "NOT_FOUND")
    assert api.events("note.deleted", note_id=note["id"])


def test_case_notes_list(admin: httpx.Client) -> None:
    case = new_case(admin)
    word = unique("w")
    first = ok(admin.post(f"/cases/{case['id']}/notes", json={"body": f"Filed motion {word}"}), 201)
    second = ok(admin.post(f"/cases/{case['id']}/notes", json={"body": "Reminder", "pinned": True}), 201)
    assert [n["id"] for n in ok(admin.get(f"/cases/{case['id']}/notes"))] == [second["id"], first["id"]]
    assert [n["id"] for n in ok(admin.get(f"/cases/{case['id']}/notes", params={"pinned": "true"}))] == [
        second["id"]
    ]
    assert [n["id"] for n in ok(admin.get(f"/cases/{case['id']}/notes", params={"search": word}))] == [
        first["id"]
    ]
    assert ok(admin.get(f"/cases/{case['id']}/notes", params={"fields": "id,pinned", "pinned": "false"})) == [
        {"id": first["id"], "pinned": False}
    ]
    other = new_case(admin)
    assert ok(admin.get(f"/cases/{other['id']}/notes")) == []
    api_error(admin.get("/cases/case_nope/notes"), 404, "NOT_FOUND")


def test_validation(admin: httpx.Client) -> None:
    case = new_case(admin)
    for body in ({}, {"body": ""}, {"body": "   "}):
        assert details(
            api_error(admin.post(f"/cases/{case['id']}/notes", json=body), 422, "VALIDATION_ERROR")
        ) == {"body": "Body is required"}
    bad = admin.post(f"/cases/{case['id']}/notes", json={"body": "x", "format": "html"})
    assert "format" in details(api_error(bad, 422, "VALIDATION_ERROR"))
    note = ok(admin.post(f"/cases/{case['id']}/notes", json={"body": "x"}), 201)
    assert "body" in details(
        api_error(admin.patch(f"/notes/{note['id']}", json={"body": ""}), 422, "VALIDATION_ERROR")
    )


def test_notes_on_a_contact(admin: httpx.Client) -> None:
    contact = ok(admin.post("/contacts", json={"name": unique("Noted ")}), 201)
    note = ok(admin.post(f"/contacts/{contact['id']}/notes", json={"body": "Met at the conference"}), 201)
    assert note["contact_id"] == contact["id"] and note["case_id"] is None
    assert [n["id"] for n in ok(admin.get(f"/contacts/{contact['id']}/notes"))] == [note["id"]]
    ok(admin.patch(f"/notes/{note['id']}", json={"body": "Met at the bar conference"}))
    # Deleting the contact deletes its notes.
    ok(admin.delete(f"/contacts/{contact['id']}"))
    api_error(admin.get(f"/notes/{note['id']}"), 404, "NOT_FOUND")


def test_permissions_follow_the_case_or_the_contact(api: Api, admin: httpx.Client) -> None:
    case = new_case(admin)
    contact = ok(admin.post("/contacts", json={"name": unique("Perm ")}), 201)
    case_note = ok(admin.post(f"/cases/{case['id']}/notes", json={"body": "on the case"}), 201)
    contact_note = ok(admin.post(f"/contacts/{contact['id']}/notes", json={"body": "on the contact"}), 201)
    _, viewer = api.make_user("viewer")
    with api.client(token=viewer) as c:
        ok(c.get(f"/notes/{case_note['id']}"))
        ok(c.get(f"/notes/{contact_note['id']}"))
        auth_error(c.post(f"/cases/{case['id']}/notes", json={"body": "x"}), 403, "AUTH_010")
        auth_error(c.patch(f"/notes/{case_note['id']}", json={"body": "x"}), 403, "AUTH_010")
        auth_error(c.delete(f"/notes/{contact_note['id']}"), 403, "AUTH_010")
    with api.client(api_key=api.make_key(["read:contacts"])["key"]) as c:
        ok(c.get(f"/notes/{contact_note['id']}"))
        auth_error(c.get(f"/notes/{case_note['id']}"), 403, "AUTH_010")
        auth_error(c.get(f"/cases/{case['id']}/notes"), 403, "AUTH_010")
