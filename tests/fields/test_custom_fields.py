"""Custom fields (issue 27, item 4): definitions by administrators, typed values validated (422
naming the field), defaults, field sets per case type, required fields (always and before a
status), `cf.<name>` filters and sorts, `fields=custom_fields{…}`, search, events, contacts.

The server is shared by the whole run: every field here is named uniquely, and those that are
required or have defaults sit in a set of a case type of this module's own, so other tests' cases
are untouched."""

from __future__ import annotations

import httpx
import pytest

from tests.support.assertions import api_error, details, ok
from tests.support.factories import new_case, unique
from tests.support.servers import Api


def _field(admin: httpx.Client, **body) -> dict:
    return dict(ok(admin.post("/admin/custom-fields", json=body), 201))


@pytest.fixture(scope="module")
def kit(api: Api) -> dict:
    """A case type of its own, a set for it, and one field of each type."""
    ctype = unique("ctype")
    s = unique("f")  # a suffix that keeps this run's field names apart from other runs'
    with api.admin() as admin:
        fset = ok(
            admin.post(
                "/admin/custom-field-sets", json={"name": "Litigation", "case_types": [ctype.upper()]}
            ),
            201,
        )
        contact = ok(admin.post("/contacts", json={"name": "Judge Dredd"}), 201)
        names = {
            "court": _field(admin, name=f"court_{s}", label="Court", field_type="text"),
            "notes": _field(admin, name=f"notes_{s}", label="Notes", field_type="long_text"),
            "claims": _field(admin, name=f"claims_{s}", label="Claims", field_type="number"),
            "amount": _field(admin, name=f"amount_{s}", label="Amount", field_type="decimal"),
            "filed": _field(admin, name=f"filed_{s}", label="Filed on", field_type="date"),
            "jury": _field(admin, name=f"jury_{s}", label="Jury", field_type="boolean"),
            "stage": _field(
                admin,
                name=f"stage_{s}",
                label="Stage",
                field_type="single_choice",
                choices=["pleading", "discovery", "trial"],
                default="pleading",
                field_set_id=fset["id"],
            ),
            "areas": _field(
                admin,
                name=f"areas_{s}",
                label="Areas",
                field_type="multiple_choice",
                choices=["ip", "tax", "labour"],
            ),
            "judge": _field(admin, name=f"judge_{s}", label="Judge", field_type="contact"),
            "partner": _field(admin, name=f"partner_{s}", label="Partner", field_type="user"),
            "docket": _field(
                admin,
                name=f"docket_{s}",
                label="Docket",
                field_type="text",
                required=True,
                required_for_statuses=[],
                field_set_id=fset["id"],
            ),
            "outcome": _field(
                admin,
                name=f"outcome_{s}",
                label="Outcome",
                field_type="text",
                required_for_statuses=["closed"],
                field_set_id=fset["id"],
            ),
        }
    return {"ctype": ctype, "set": fset, "contact": contact, "f": {k: v["name"] for k, v in names.items()}}


def test_definitions_are_listed_and_only_administrators_change_them(api: Api, kit) -> None:
    with api.admin() as admin:
        listed = {f["name"]: f for f in ok(admin.get("/custom-fields"))}
        assert listed[kit["f"]["stage"]]["choices"] == ["pleading", "discovery", "trial"]
        assert listed[kit["f"]["stage"]]["field_set_id"] == kit["set"]["id"]
        sets = ok(admin.get("/custom-field-sets"))
        assert [s["case_types"] for s in sets if s["id"] == kit["set"]["id"]] == [[kit["ctype"].lower()]]
        taken = admin.post(
            "/admin/custom-fields", json={"name": kit["f"]["court"], "label": "x", "field_type": "text"}
        )
        api_error(taken, 409, "CONFLICT")
        bad = admin.post(
            "/admin/custom-fields", json={"name": unique("c"), "label": "x", "field_type": "single_choice"}
        )
        assert "choices" in details(api_error(bad, 422, "VALIDATION_ERROR"))
        bad_default = admin.post(
            "/admin/custom-fields",
            json={"name": unique("d"), "label": "x", "field_type": "number", "default": "ten"},
        )
        assert "default" in details(api_error(bad_default, 422, "VALIDATION_ERROR"))
    _, token = api.make_user("attorney")
    with api.client(token=token) as lawyer:
        assert any(f["name"] == kit["f"]["court"] for f in ok(lawyer.get("/custom-fields")))
        refused = lawyer.post(
            "/admin/custom-fields", json={"name": unique("e"), "label": "x", "field_type": "text"}
        )
        assert refused.status_code == 403


def test_values_are_validated_and_returned(api: Api, admin: httpx.Client, kit) -> None:
    f, user = kit["f"], api.make_user("attorney")[0]
    values = {
        f["court"]: "Superior Court of Alameda",
        f["notes"]: "A long story " * 50,
        f["claims"]: 3,
        f["amount"]: "1250.50",
        f["filed"]: "2026-03-01",
        f["jury"]: True,
        f["areas"]: ["ip", "tax", "ip"],
        f["judge"]: kit["contact"]["id"],
        f["partner"]: user["id"],
        f["docket"]: "D-1",
    }
    case = new_case(admin, case_type=kit["ctype"], custom_fields=values)
    shown = case["custom_fields"]
    assert shown[f["areas"]] == ["ip", "tax"] and shown[f["amount"]] == "1250.50" and shown[f["claims"]] == 3
    assert shown[f["stage"]] == "pleading"  # the default
    assert ok(admin.get(f"/cases/{case['id']}"))["custom_fields"] == shown

    wrong = {
        f["claims"]: "three",
        f["amount"]: "1,5",
        f["filed"]: "01/03/2026",
        f["jury"]: "yes",
        f["stage"]: "appeal",
        f["areas"]: [],
    }
    error = api_error(
        admin.post(
            "/cases",
            json={"title": "x", "case_type": kit["ctype"], "custom_fields": {**wrong, f["docket"]: "D"}},
        ),
        422,
        "VALIDATION_ERROR",
    )
    assert set(details(error)) == {f"custom_fields.{name}" for name in wrong}
    # Values of the right shape that name nothing, and a field that does not exist: 404, each
    # named (docs/api-conventions.md#references).
    nothing = {f["judge"]: "con_nobody", f["partner"]: "user_nobody", "no_such_field": 1}
    given = {**nothing, f["docket"]: "D"}
    error = api_error(
        admin.post("/cases", json={"title": "x", "case_type": kit["ctype"], "custom_fields": given}),
        404,
        "NOT_FOUND",
    )
    assert set(details(error)) == {f"custom_fields.{name}" for name in nothing}


def test_required_fields_and_field_sets_per_case_type(admin: httpx.Client, kit) -> None:
    f = kit["f"]
    missing = admin.post("/cases", json={"title": "x", "case_type": kit["ctype"]})
    assert details(api_error(missing, 422, "VALIDATION_ERROR")) == {
        f"custom_fields.{f['docket']}": "Docket is required"
    }
    # Another case type: the set's fields do not apply (not required, not accepted, no default).
    other = new_case(admin, case_type="civil")
    assert f["stage"] not in other["custom_fields"] and f["docket"] not in other["custom_fields"]
    refused = admin.patch(f"/cases/{other['id']}", json={"custom_fields": {f["docket"]: "D-2"}})
    assert f"custom_fields.{f['docket']}" in details(api_error(refused, 422, "VALIDATION_ERROR"))
    case = new_case(admin, case_type=kit["ctype"], custom_fields={f["docket"]: "D-3"})
    cleared = admin.patch(f"/cases/{case['id']}", json={"custom_fields": {f["docket"]: None}})
    assert f"custom_fields.{f['docket']}" in details(api_error(cleared, 422, "VALIDATION_ERROR"))


def test_a_status_move_needs_its_required_fields(api: Api, admin: httpx.Client, kit) -> None:
    f = kit["f"]
    case = new_case(admin, case_type=kit["ctype"], custom_fields={f["docket"]: "D-4"})
    refused = admin.patch(f"/cases/{case['id']}", json={"status": "closed"})
    assert details(api_error(refused, 422, "VALIDATION_ERROR")) == {
        f"custom_fields.{f['outcome']}": "Outcome is required before moving to closed"
    }
    assert ok(admin.get(f"/cases/{case['id']}"))["status"] == "active"
    closed = ok(
        admin.patch(
            f"/cases/{case['id']}", json={"status": "closed", "custom_fields": {f["outcome"]: "Settled"}}
        )
    )
    assert closed["status"] == "closed" and closed["custom_fields"][f["outcome"]] == "Settled"
    (updated,) = api.events("case.updated", case_id=case["id"])
    assert updated["changes"][f"custom_fields.{f['outcome']}"] == {"from": None, "to": "Settled"}
    (created,) = api.events("case.created", case_id=case["id"])
    assert created["custom_fields"] == {f["docket"]: "D-4", f["stage"]: "pleading"}


def test_filters_sorts_and_projection(admin: httpx.Client, kit) -> None:
    f, tag = kit["f"], unique("heron")
    specs = [
        ("A", 5, "2026-01-10", ["ip"], "Court of Appeal"),
        ("B", 1, "2026-02-10", ["tax"], "court of appeal"),
        ("C", 9, None, ["ip", "labour"], "High Court"),
        ("D", None, "2025-12-31", None, None),
    ]
    made = {}
    for title, claims, filed, areas, court in specs:
        values = {f["claims"]: claims, f["filed"]: filed, f["areas"]: areas, f["court"]: court}
        made[title] = new_case(
            admin, title=f"{tag} {title}", custom_fields={k: v for k, v in values.items() if v is not None}
        )

    def titles(**params) -> list[str]:
        return [c["title"].split()[-1] for c in ok(admin.get("/cases", params={"search": tag, **params}))]

    assert titles(**{f"cf.{f['court']}": "COURT OF APPEAL", "sort": "title", "order": "asc"}) == ["A", "B"]
    assert titles(**{f"cf.{f['areas']}": "ip", "sort": "title", "order": "asc"}) == ["A", "C"]
    assert titles(**{f"cf.{f['claims']}": "2..9", "sort": "title", "order": "asc"}) == ["A", "C"]
    assert titles(**{f"cf.{f['filed']}": "..2026-01-31", "sort": "title", "order": "asc"}) == ["A", "D"]
    assert titles(**{f"cf.{f['claims']}": "1,9", f"cf.{f['areas']}": "labour"}) == ["C"]
    # Sorted by a custom field, those without a value last (ascending) or first (descending).
    assert titles(sort=f"cf.{f['claims']}", order="asc") == ["B", "A", "C", "D"]
    assert titles(sort=f"cf.{f['claims']}", order="desc") == ["D", "C", "A", "B"]
    # Pages by cursor follow the custom sort.
    first = admin.get(
        "/cases", params={"search": tag, "sort": f"cf.{f['claims']}", "order": "asc", "limit": 2}
    )
    cursor = first.json()["meta"]["pagination"]["next_cursor"]
    second = ok(
        admin.get(
            "/cases",
            params={"search": tag, "sort": f"cf.{f['claims']}", "order": "asc", "limit": 2, "cursor": cursor},
        )
    )
    assert [c["title"].split()[-1] for c in second] == ["C", "D"]

    projected = ok(
        admin.get(
            "/cases",
            params={
                "search": tag,
                "fields": f"id,custom_fields{{{f['claims']}}}",
                "sort": "title",
                "order": "asc",
            },
        )
    )
    assert projected[0] == {"id": made["A"]["id"], "custom_fields": {f["claims"]: 5}}
    assert projected[3] == {"id": made["D"]["id"], "custom_fields": {f["claims"]: None}}


def test_a_filtered_list_follows_trash_restore_and_value_changes(api: Api, admin: httpx.Client, kit) -> None:
    """A `cf.<name>=` filter in the default order reads its matches, their order and its total
    from the value index, which keeps each case's created_at (migration 0026): the list must
    follow a case to the trash and back, and a value that changes, as the cases themselves do."""
    court, value, moved = kit["f"]["court"], unique("Registry "), unique("Registry ")
    made = {t: new_case(admin, title=unique(f"{t} "), custom_fields={court: value}) for t in "ABC"}
    by_id = {c["id"]: t for t, c in made.items()}

    def listed(wanted: str, **params) -> tuple[list[str], int]:
        r = admin.get("/cases", params={f"cf.{court}": wanted, **params})
        return [by_id[c["id"]] for c in ok(r)], r.json()["meta"]["pagination"]["total"]

    def pages() -> list[str]:
        seen, params = [], {"limit": 1}
        while True:
            r = admin.get("/cases", params={f"cf.{court}": value, **params})
            seen += [by_id[c["id"]] for c in ok(r)]
            cursor = r.json()["meta"]["pagination"].get("next_cursor")
            if cursor is None:
                return seen
            params = {"limit": 1, "cursor": cursor}

    assert listed(value) == (["C", "B", "A"], 3)  # the newest first
    assert listed(value, order="asc") == (["A", "B", "C"], 3)
    assert pages() == ["C", "B", "A"]

    ok(admin.delete(f"/cases/{made['B']['id']}"))
    assert listed(value) == (["C", "A"], 2)
    assert pages() == ["C", "A"]
    ok(admin.post(f"/admin/trash/{made['B']['id']}/restore"))
    assert listed(value) == (["C", "B", "A"], 3)

    ok(admin.patch(f"/cases/{made['A']['id']}", json={"custom_fields": {court: moved}}))
    assert listed(value) == (["C", "B"], 2)
    assert listed(moved) == (["A"], 1)
    # Each value row carries its case's created_at, also when written by an update.
    rows = api.sql(
        "SELECT v.case_id FROM custom_field_values v JOIN cases c ON c.id = v.case_id"
        " WHERE v.field_id = (SELECT id FROM custom_fields WHERE name = :name)"
        " AND (v.case_created_at IS NULL OR v.case_created_at <> c.created_at)",
        name=court,
    )
    assert rows == []


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"cf.no_such_field": "x"}, "cf.no_such_field"),
        ({"sort": "cf.no_such_field"}, "sort"),
        ({"fields": "id,custom_fields{no_such_field}"}, "fields"),
        ({"cf.Bad-Name": "x"}, "cf.Bad-Name"),
    ],
)
def test_unknown_custom_fields_in_a_list_are_refused(admin: httpx.Client, params, field) -> None:
    error = api_error(admin.get("/cases", params=params), 422, "VALIDATION_ERROR")
    assert [d["field"] for d in error["details"]] == [field]


def test_bad_filter_values_are_refused(admin: httpx.Client, kit) -> None:
    f = kit["f"]
    for name, value in (
        (f["claims"], "many"),
        (f["filed"], "yesterday"),
        (f["areas"], "cooking"),
        (f["notes"], "x"),
    ):
        error = api_error(admin.get("/cases", params={f"cf.{name}": value}), 422, "VALIDATION_ERROR")
        assert [d["field"] for d in error["details"]] == [f"cf.{name}"]


def test_search_finds_custom_field_text(admin: httpx.Client, kit) -> None:
    word = unique("zanzibar")
    case = new_case(admin, custom_fields={kit["f"]["court"]: f"Tribunal of {word}"})
    assert [c["id"] for c in ok(admin.get("/cases", params={"search": word}))] == [case["id"]]


def test_contacts_have_custom_fields(admin: httpx.Client) -> None:
    name = unique("vat")
    _field(admin, entity="contact", name=name, label="VAT number", field_type="text")
    contact = ok(admin.post("/contacts", json={"name": "Acme", "custom_fields": {name: "GB123"}}), 201)
    assert contact["custom_fields"] == {name: "GB123"}
    refused = admin.patch(f"/contacts/{contact['id']}", json={"custom_fields": {name: 12}})
    assert f"custom_fields.{name}" in details(api_error(refused, 422, "VALIDATION_ERROR"))
    changed = ok(admin.patch(f"/contacts/{contact['id']}", json={"custom_fields": {name: "GB999"}}))
    assert changed["custom_fields"] == {name: "GB999"}
    found = ok(
        admin.get("/contacts", params={f"cf.{name}": "gb999", "fields": f"id,custom_fields{{{name}}}"})
    )
    assert found == [{"id": contact["id"], "custom_fields": {name: "GB999"}}]
    refused = admin.get("/contacts", params={"cf.no_such_field": "x"})
    assert [d["field"] for d in api_error(refused, 422, "VALIDATION_ERROR")["details"]] == [
        "cf.no_such_field"
    ]
    # A contact field is not a case field: there is no case field of that name (404).
    refused = admin.post("/cases", json={"title": "x", "custom_fields": {name: "GB1"}})
    assert f"custom_fields.{name}" in details(api_error(refused, 404, "NOT_FOUND"))
