"""Conflict checks: fuzzy matches of names, aliases, parties of every case (closed and archived
too) and client names; the stored check; the automatic check on an adverse party; what a hidden
matter's hit shows; the permission."""

from __future__ import annotations

import re

import httpx
import pytest

from casefile.conflicts.service import length_window, redact
from casefile.nlp.name_keys import name_key
from tests.support.assertions import api_error, auth_error, ok
from tests.support.factories import new_case, unique
from tests.support.servers import Api


def contact(client: httpx.Client, name: str, **fields: object) -> dict:
    return dict(ok(client.post("/contacts", json={"kind": "organization", "name": name, **fields}), 201))


def party(client: httpx.Client, case_id: str, contact_id: str, role: str) -> dict:
    body = {"contact_id": contact_id, "role": role}
    return dict(ok(client.post(f"/cases/{case_id}/parties", json=body), 201))


def check(client: httpx.Client, *names: str, **extra: object) -> dict:
    return dict(ok(client.post("/conflict-checks", json={"names": list(names), **extra}), 201))


def test_acme_corp_finds_acme_corporation_as_party_and_by_alias(api: Api, admin: httpx.Client) -> None:
    tag = unique("tag")
    acme = contact(admin, f"Acme Corporation {tag}", aliases=[f"Roadrunner Holdings {tag}"])
    case = new_case(admin, client_name=None)
    party(admin, case["id"], acme["id"], "adverse_party")

    result = check(admin, f"ACME Corp. {tag}", f"Road-Runner Holdings {tag}")
    assert re.match(r"^cc_[0-9a-z]{26}$", result["id"])
    assert result["names"] == [f"ACME Corp. {tag}", f"Road-Runner Holdings {tag}"]
    me = ok(admin.get("/users/me"))
    assert result["created_by"] == me["id"] and result["case_id"] is None
    mine = [h for h in result["hits"] if h["contact_id"] == acme["id"]]
    assert {(h["name"], h["source"], h["case_id"], h["role"], h["matched"], h["score"]) for h in mine} == {
        (f"ACME Corp. {tag}", "contact", None, None, f"Acme Corporation {tag}", 1.0),
        (f"ACME Corp. {tag}", "party", case["id"], "adverse_party", f"Acme Corporation {tag}", 1.0),
        (f"Road-Runner Holdings {tag}", "alias", None, None, f"Roadrunner Holdings {tag}", 1.0),
        (
            f"Road-Runner Holdings {tag}",
            "party",
            case["id"],
            "adverse_party",
            f"Roadrunner Holdings {tag}",
            1.0,
        ),
    }
    assert all(h["visible"] for h in mine)
    # Stored: fetched later, the same.
    assert ok(admin.get(f"/conflict-checks/{result['id']}")) == result
    [event] = api.events("conflict_check.completed", conflict_check_id=result["id"])
    assert event["hit_count"] == len(result["hits"]) and "hits" not in event


@pytest.mark.parametrize(
    ("stored", "asked"),
    [
        ("Société Générale Zélie", "SOCIETE GENERALE zelie"),
        ("O'Brien & Sons, Ltd.", "OBrien and Sons Limited"),
        ("Smith, John", "John Smith"),  # word order
        ("Jonathan Smithers", "Jonathon Smithers"),  # one letter off
    ],
)
def test_accents_punctuation_order_and_typos(admin: httpx.Client, stored: str, asked: str) -> None:
    tag = unique("t")
    found = contact(admin, f"{stored} {tag}")
    hits = check(admin, f"{asked} {tag}")["hits"]
    [hit] = [h for h in hits if h["contact_id"] == found["id"]]
    assert hit["source"] == "contact" and 0.85 <= hit["score"] <= 1


def test_a_different_name_is_no_hit(admin: httpx.Client) -> None:
    tag = unique("t")
    found = contact(admin, f"Acme Corporation {tag}")
    hits = check(admin, f"Apex Industries {tag}")["hits"]
    assert found["id"] not in [h["contact_id"] for h in hits]


def test_parties_of_closed_and_archived_cases_and_client_names_are_found(admin: httpx.Client) -> None:
    tag = unique("t")
    former = contact(admin, f"Wayne Enterprises {tag}")
    closed = new_case(admin, client_name=None)
    party(admin, closed["id"], former["id"], "client")
    ok(admin.patch(f"/cases/{closed['id']}", json={"status": "closed"}))
    archived = new_case(admin, client_name=None)
    party(admin, archived["id"], former["id"], "opposing_counsel")
    ok(admin.patch(f"/cases/{archived['id']}", json={"status": "closed"}))
    ok(admin.patch(f"/cases/{archived['id']}", json={"status": "archived"}))
    hits = check(admin, f"Wayne Enterprises, Inc. {tag}")["hits"]
    roles = {(h["case_id"], h["role"]) for h in hits if h["source"] == "party"}
    assert roles == {(closed["id"], "client"), (archived["id"], "opposing_counsel")}


def test_client_name_of_a_case_is_found(api: Api, admin: httpx.Client) -> None:
    tag = unique("t")
    case = new_case(admin, client_name=f"Stark Industries {tag}")
    hits = check(admin, f"Stark Industries Corp {tag}")["hits"]
    # The new case's client party stands for its client name: one hit on the case.
    on_case = [h for h in hits if h["case_id"] == case["id"]]
    assert [(h["source"], h["role"]) for h in on_case] == [("party", "client")]
    # A client name with no client party (a case from before parties existed) is found itself.
    api.sql("DELETE FROM parties WHERE case_id = :case_id", case_id=case["id"])
    hits = check(admin, f"Stark Industries Corp {tag}")["hits"]
    assert [(h["source"], h["role"], h["matched"]) for h in hits if h["case_id"] == case["id"]] == [
        ("client_name", "client", f"Stark Industries {tag}")
    ]


def test_adding_an_adverse_party_runs_a_check(api: Api, admin: httpx.Client) -> None:
    tag = unique("t")
    client = contact(admin, f"Umbrella Corporation {tag}")
    earlier = new_case(admin, client_name=None)
    party(admin, earlier["id"], client["id"], "client")
    lookalike = contact(admin, f"Umbrella Corp {tag}")
    case = new_case(admin, client_name=None)
    adverse = party(admin, case["id"], client["id"], "adverse_party")
    assert adverse["conflict_check_id"]
    result = ok(admin.get(f"/conflict-checks/{adverse['conflict_check_id']}"))
    assert result["case_id"] == case["id"] and result["names"] == [client["name"]]
    found = {(h["source"], h["contact_id"], h["case_id"], h["role"]) for h in result["hits"]}
    # The firm acts for them in another case: the conflict. A look-alike contact too. Not the
    # party just added, nor the contact matching itself.
    assert ("party", client["id"], earlier["id"], "client") in found
    assert ("contact", lookalike["id"], None, None) in found
    assert ("party", client["id"], case["id"], "adverse_party") not in found
    assert ("contact", client["id"], None, None) not in found
    [event] = api.events("party.added", party_id=adverse["id"])
    assert event["conflict_check_id"] == result["id"]
    # Other roles run no check.
    witness = party(admin, case["id"], lookalike["id"], "witness")
    assert witness["conflict_check_id"] is None


def test_check_for_a_case_and_validation(admin: httpx.Client) -> None:
    case = new_case(admin, client_name=None)
    result = check(admin, unique("Nobody "), case_id=case["id"])
    assert result["case_id"] == case["id"] and result["hits"] == []
    api_error(admin.post("/conflict-checks", json={"names": ["x"], "case_id": "case_nope"}), 404, "NOT_FOUND")
    for body in ({"names": []}, {"names": [""]}, {}, {"names": ["x"], "extra": 1}):
        api_error(admin.post("/conflict-checks", json=body), 422, "VALIDATION_ERROR")
    api_error(admin.get("/conflict-checks/cc_nope"), 404, "NOT_FOUND")
    listed = ok(admin.get("/conflict-checks", params={"case_id": case["id"]}))
    assert [c["id"] for c in listed] == [result["id"]]


def test_permission(api: Api) -> None:
    _, viewer = api.make_user("viewer")
    _, attorney = api.make_user("attorney")
    with api.client(token=viewer) as c:
        auth_error(c.post("/conflict-checks", json={"names": ["x"]}), 403, "AUTH_010")
    with api.client(token=attorney) as c:
        ok(c.post("/conflict-checks", json={"names": ["x"]}), 201)
    with api.client(api_key=api.make_key(["read:conflicts"])["key"]) as c:
        ok(c.post("/conflict-checks", json={"names": ["x"]}), 201)


# --- rules, without a server -----------------------------------------------------------------------


def test_a_hit_on_a_hidden_matter_shows_only_that_it_exists() -> None:
    hits = [
        {"name": "Acme", "matched": "Acme Corp", "score": 1.0, "source": "party",
         "contact_id": "con_1", "case_id": "case_hidden", "role": "client"},
        {"name": "Acme", "matched": "Acme Corp", "score": 1.0, "source": "party",
         "contact_id": "con_1", "case_id": "case_seen", "role": "adverse_party"},
        {"name": "Acme", "matched": "Acme Inc", "score": 0.9, "source": "client_name",
         "contact_id": None, "case_id": "case_hidden", "role": "client"},
        {"name": "Acme", "matched": "Acme Corp", "score": 1.0, "source": "contact",
         "contact_id": "con_1", "case_id": None, "role": None},
    ]  # fmt: skip
    shown = redact(hits, {"case_seen"})
    hidden = {"name": "Acme", "matched": None, "contact_id": None, "role": None, "visible": False}
    assert shown[0] == {**hidden, "score": 1.0, "source": "party", "case_id": "case_hidden"}
    assert shown[1] == {**hits[1], "visible": True}
    assert shown[2] == {**hidden, "score": 0.9, "source": "client_name", "case_id": "case_hidden"}
    assert shown[3] == {**hits[3], "visible": True}
    assert hits[0]["matched"] == "Acme Corp"  # the stored record is not changed


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("ACME Corp.", "acme"),
        ("Acme Corporation", "acme"),
        ("Road-Runner Holdings", "holdings roadrunner"),  # words in alphabetical order
        ("Müller GmbH & Co. KG", "muller"),
        ("J.P. Morgan & Co.", "jp morgan"),
        ("Smith, L.L.C.", "smith"),
        ("The Acme Company", "acme"),
        ("Ørsted A/S", "orsted"),
        ("The Company", "company the"),  # nothing but noise: kept
    ],
)
def test_name_keys(name: str, key: str) -> None:
    assert name_key(name) == key


def test_the_length_window_loses_no_match() -> None:
    from rapidfuzz import fuzz

    # Any key outside the window scores below the cut-off even against its best-matching text.
    for length in range(1, 60):
        low, high = length_window(length)
        a = "a" * length
        assert fuzz.ratio(a, "a" * low) >= 85 and fuzz.ratio(a, "a" * high) >= 85
        assert fuzz.ratio(a, "a" * (low - 1)) < 85 or low == 0
        assert fuzz.ratio(a, "a" * (high + 1)) < 85
