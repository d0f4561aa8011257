"""Contacts and parties: fields, validation, search over names and aliases, filters, parties with
their roles, the client party of a new case, events, permissions."""

from __future__ import annotations

import re

import httpx

from tests.support.assertions import api_error, auth_error, details, ok
from tests.support.factories import new_case, unique
from tests.support.servers import Api


def new_contact(client: httpx.Client, **fields: object) -> dict:
    body = {"kind": "organization", "name": unique("Contact "), **fields}
    return dict(ok(client.post("/contacts", json=body), 201))


def test_create_returns_every_field_and_emits_contact_created(api: Api, admin: httpx.Client) -> None:
    body = {
        "kind": "organization",
        "name": unique("Globex Inc. "),
        "aliases": ["Globex", "Globex Corporation"],
        "emails": ["legal@globex.example"],
        "phones": ["+1 555 0100"],
        "addresses": [
            {"label": "head office", "street": "1 Main St", "city": "Springfield", "country": "US"}
        ],
        "identifiers": {"company_number": "01234567"},
        "tags": ["vendor", "priority"],
        "notes": "Prefers email.",
    }
    contact = ok(admin.post("/contacts", json=body), 201)
    assert re.match(r"^con_[0-9a-z]{26}$", contact["id"])
    assert {k: contact[k] for k in body} == body
    assert contact["created_at"] == contact["updated_at"]
    assert ok(admin.get(f"/contacts/{contact['id']}")) == contact
    [event] = api.events("contact.created", contact_id=contact["id"])
    assert event["name"] == body["name"] and event["aliases"] == body["aliases"]


def test_validation(admin: httpx.Client) -> None:
    assert details(api_error(admin.post("/contacts", json={"kind": "person"}), 422, "VALIDATION_ERROR")) == {
        "name": "Name is required"
    }
    for body, field in [
        ({"name": "x", "kind": "robot"}, "kind"),
        ({"name": "x", "emails": ["not-an-email"]}, "emails.0"),
        ({"name": "x", "aliases": [""]}, "aliases.0"),
        ({"name": "x", "colour": "red"}, "colour"),
    ]:
        assert field in details(api_error(admin.post("/contacts", json=body), 422, "VALIDATION_ERROR"))


def test_update_and_delete(api: Api, admin: httpx.Client) -> None:
    contact = new_contact(admin, aliases=["Old Name"])
    updated = ok(admin.patch(f"/contacts/{contact['id']}", json={"aliases": ["New Name"], "tags": ["x"]}))
    assert (
        updated["aliases"] == ["New Name"] and updated["tags"] == ["x"] and updated["name"] == contact["name"]
    )
    [event] = api.events("contact.updated", contact_id=contact["id"])
    assert event["changes"]["aliases"] == {"from": ["Old Name"], "to": ["New Name"]}
    assert ok(admin.delete(f"/contacts/{contact['id']}")) == {"id": contact["id"], "deleted": True}
    api_error(admin.get(f"/contacts/{contact['id']}"), 404, "NOT_FOUND")
    assert api.events("contact.deleted", contact_id=contact["id"])


def test_search_finds_names_and_aliases_ignoring_accents_and_punctuation(admin: httpx.Client) -> None:
    word = unique("w")
    by_name = new_contact(admin, name=f"Müller {word} GmbH")
    by_alias = new_contact(admin, name=unique("Unrelated "), aliases=[f"Road-Runner {word}"])
    other = new_contact(admin, name=unique("Someone Else "))

    def found(search: str) -> list[str]:
        return [c["id"] for c in ok(admin.get("/contacts", params={"search": search, "limit": 100}))]

    assert found(word) == [by_alias["id"], by_name["id"]]  # newest first
    assert found(f"muller {word}") == [by_name["id"]]
    assert found(f"roadrunner {word}") == [by_alias["id"]]
    assert found(f"road runner {word}") == [by_alias["id"]]
    assert other["id"] not in found(word)


def test_filters_sort_and_fields(admin: httpx.Client) -> None:
    tag = unique("tag")
    person = new_contact(admin, kind="person", name=unique("B Person "), tags=[tag])
    org = new_contact(admin, kind="organization", name=unique("A Org "), tags=[tag.upper()])
    listed = ok(admin.get("/contacts", params={"tags": tag, "sort": "name", "order": "asc"}))
    assert [c["id"] for c in listed] == [org["id"], person["id"]]
    people = ok(admin.get("/contacts", params={"tags": tag, "kind": "person", "fields": "id,name"}))
    assert people == [{"id": person["id"], "name": person["name"]}]
    api_error(admin.get("/contacts", params={"kind": "robot"}), 422, "VALIDATION_ERROR")


def test_permissions(api: Api) -> None:
    _, viewer = api.make_user("viewer")
    _, paralegal = api.make_user("paralegal")
    with api.client(token=paralegal) as c:
        contact = new_contact(c)
        ok(c.delete(f"/contacts/{new_contact(c)['id']}"))
    with api.client(token=viewer) as c:
        ok(c.get(f"/contacts/{contact['id']}"))
        auth_error(c.post("/contacts", json={"name": "x"}), 403, "AUTH_010")
        auth_error(c.delete(f"/contacts/{contact['id']}"), 403, "AUTH_010")
    key = api.make_key(["write:contacts"])["key"]
    with api.client(api_key=key) as c:
        # write does not imply read: the answer is the id only.
        assert set(ok(c.post("/contacts", json={"name": unique("Keyed ")}), 201)) == {"id"}
        auth_error(c.get("/contacts"), 403, "AUTH_010")


def test_parties_of_a_case(api: Api, admin: httpx.Client) -> None:
    case = new_case(admin, client_name=None)
    witness = new_contact(admin, kind="person")
    party = ok(
        admin.post(
            f"/cases/{case['id']}/parties",
            json={"contact_id": witness["id"], "role": "witness", "starts_on": "2026-01-05"},
        ),
        201,
    )
    assert re.match(r"^pty_[0-9a-z]{26}$", party["id"])
    assert party["case_id"] == case["id"] and party["contact_id"] == witness["id"]
    assert party["role"] == "witness" and party["starts_on"] == "2026-01-05" and party["ends_on"] is None
    assert party["contact_name"] == witness["name"] and party["conflict_check_id"] is None
    assert ok(admin.get(f"/cases/{case['id']}/parties")) == [party]
    [event] = api.events("party.added", party_id=party["id"])
    assert event["case_id"] == case["id"] and event["role"] == "witness"

    same = {"contact_id": witness["id"], "role": "witness"}
    api_error(admin.post(f"/cases/{case['id']}/parties", json=same), 409, "CONFLICT")
    bad = admin.post(f"/cases/{case['id']}/parties", json={"contact_id": witness["id"], "role": "villain"})
    assert "role" in details(api_error(bad, 422, "VALIDATION_ERROR"))
    missing = admin.post(f"/cases/{case['id']}/parties", json={"contact_id": "con_nope", "role": "judge"})
    assert details(api_error(missing, 404, "NOT_FOUND")) == {"contact_id": "Contact not found"}
    api_error(admin.post("/cases/case_nope/parties", json=same), 404, "NOT_FOUND")
    # A contact who is a party stays until it is removed from the case.
    api_error(admin.delete(f"/contacts/{witness['id']}"), 409, "CONFLICT")
    assert ok(admin.delete(f"/cases/{case['id']}/parties/{party['id']}")) == {
        "id": party["id"],
        "deleted": True,
    }
    assert ok(admin.get(f"/cases/{case['id']}/parties")) == []
    assert api.events("party.removed", party_id=party["id"])
    api_error(admin.delete(f"/cases/{case['id']}/parties/{party['id']}"), 404, "NOT_FOUND")
    ok(admin.delete(f"/contacts/{witness['id']}"))


def test_party_of_another_case_is_not_found_here(admin: httpx.Client) -> None:
    one, two = new_case(admin, client_name=None), new_case(admin, client_name=None)
    contact = new_contact(admin)
    party = ok(
        admin.post(f"/cases/{one['id']}/parties", json={"contact_id": contact["id"], "role": "expert"}), 201
    )
    api_error(admin.delete(f"/cases/{two['id']}/parties/{party['id']}"), 404, "NOT_FOUND")


def test_a_new_case_links_its_client_by_name(api: Api, admin: httpx.Client) -> None:
    client = unique("Initech ")
    first = new_case(admin, client_name=f"{client} LLC")
    [party] = ok(admin.get(f"/cases/{first['id']}/parties"))
    assert party["role"] == "client" and party["contact_name"] == f"{client} LLC"
    contact = ok(admin.get(f"/contacts/{party['contact_id']}"))
    assert contact["kind"] == "organization"  # the name holds a legal form
    # Another spelling of the same name finds the same contact.
    second = new_case(admin, client_name=f"{client.upper()}, L.L.C.")
    [again] = ok(admin.get(f"/cases/{second['id']}/parties"))
    assert again["contact_id"] == contact["id"]
    assert len(api.events("contact.created", contact_id=contact["id"])) == 1
    person = new_case(admin, client_name=unique("Jane Roe "))
    [p] = ok(admin.get(f"/cases/{person['id']}/parties"))
    assert ok(admin.get(f"/contacts/{p['contact_id']}"))["kind"] == "person"
    assert ok(admin.get(f"/cases/{new_case(admin, client_name=None)['id']}/parties")) == []


def test_parties_list_filters(admin: httpx.Client) -> None:
    case = new_case(admin, client_name=None)
    judge, expert = new_contact(admin, kind="person"), new_contact(admin, kind="person")
    for contact, role in ((judge, "judge"), (expert, "expert")):
        ok(admin.post(f"/cases/{case['id']}/parties", json={"contact_id": contact["id"], "role": role}), 201)
    judges = ok(admin.get(f"/cases/{case['id']}/parties", params={"role": "judge", "fields": "contact_id"}))
    assert judges == [{"contact_id": judge["id"]}]
    found = ok(admin.get(f"/cases/{case['id']}/parties", params={"search": expert["name"]}))
    assert [p["contact_id"] for p in found] == [expert["id"]]
