"""Time entries, quick entry, rates (user < client < matter), increments, timers, expenses, and
access through the matter."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.billing.helpers import billed_case
from tests.support.assertions import api_error, auth_error, details, ok
from tests.support.factories import new_case, unique
from tests.support.servers import Api, make_settings, serving
from tests.support.waiting import wait_until


def test_quick_entry_rounds_to_the_increment_and_freezes_the_rate(api: Api, admin: httpx.Client) -> None:
    case = billed_case(admin, rate="250.00")
    entry = ok(
        admin.post(
            f"/cases/{case['id']}/time-entries",
            json={
                "text": "1h20 drafted answer to motion",
                "date": "2026-11-02",
                "task_code": "L210",
                "activity_code": "A103",
            },
        ),
        201,
    )
    # 80 minutes bill 84 (1.4 h): rounded up to the 6-minute increment.
    assert entry["seconds"] == 4800 and entry["billed_seconds"] == 5040 and entry["hours"] == "1.4"
    assert entry["description"] == "drafted answer to motion" and entry["date"] == "2026-11-02"
    assert (entry["rate"], entry["rate_source"], entry["amount"], entry["currency"]) == (
        "250.00",
        "matter",
        "350.00",
        "USD",
    )
    assert entry["state"] == "draft" and entry["increment_seconds"] == 360
    call = ok(admin.post(f"/cases/{case['id']}/time-entries", json={"text": "0.3 call with client"}), 201)
    assert (call["seconds"], call["amount"]) == (1080, "75.00")
    odd = ok(
        admin.post(f"/cases/{case['id']}/time-entries", json={"seconds": 61 * 60, "description": "Review"}),
        201,
    )
    assert odd["billed_seconds"] == 66 * 60 and odd["amount"] == "275.00"  # 1.1 h
    [event] = api.events("time_entry.created", time_entry_id=entry["id"])
    assert event["amount"] == "350.00" and event["case_id"] == case["id"] and "description" not in event

    # Changing the rate later does not change recorded time.
    ok(
        admin.put(
            "/billing/rates", json={"user_id": case["me"]["id"], "amount": "400", "case_id": case["id"]}
        )
    )
    assert ok(admin.get(f"/time-entries/{entry['id']}"))["amount"] == "350.00"
    changed = ok(admin.patch(f"/time-entries/{entry['id']}", json={"seconds": 3600}))
    assert (changed["rate"], changed["amount"]) == ("250.00", "250.00")


def test_rate_precedence(api: Api, admin: httpx.Client) -> None:
    user, token = api.make_user("attorney")
    case = billed_case(admin)
    with api.client(token=token) as lawyer:

        def rate() -> tuple[str, str]:
            e = ok(lawyer.post(f"/cases/{case['id']}/time-entries", json={"text": "1h work"}), 201)
            return e["rate"], e["rate_source"]

        assert rate() == ("0.00", "none")
        ok(admin.put("/billing/rates", json={"user_id": user["id"], "amount": "100"}))
        assert rate() == ("100.00", "user")
        ok(
            admin.put(
                "/billing/rates",
                json={"user_id": user["id"], "amount": "150", "contact_id": case["client"]["id"]},
            )
        )
        assert rate() == ("150.00", "client")
        ok(admin.put("/billing/rates", json={"user_id": user["id"], "amount": "175", "case_id": case["id"]}))
        assert rate() == ("175.00", "matter")
        # Setting rates needs approve:billing, which a paralegal does not hold.
        _, para = api.make_user("paralegal")
        with api.client(token=para) as paralegal:
            auth_error(
                paralegal.put("/billing/rates", json={"user_id": user["id"], "amount": "1"}), 403, "AUTH_010"
            )


def test_references_to_nothing_name_their_field(admin: httpx.Client) -> None:
    """A body naming a user, a contact or a matter that does not exist is 404 naming the field,
    as a path naming nothing is (docs/api-conventions.md#references)."""
    me = ok(admin.get("/users/me"))
    case = billed_case(admin)
    assert details(
        api_error(
            admin.put("/billing/rates", json={"user_id": "user_nobody", "amount": "1"}), 404, "NOT_FOUND"
        )
    ) == {"user_id": "User not found"}
    nobody = {"user_id": me["id"], "amount": "1", "contact_id": "contact_nobody"}
    assert details(api_error(admin.put("/billing/rates", json=nobody), 404, "NOT_FOUND")) == {
        "contact_id": "Contact not found"
    }
    no_case = {"user_id": me["id"], "amount": "1", "case_id": "case_nobody"}
    api_error(admin.put("/billing/rates", json=no_case), 404, "NOT_FOUND")
    someone_else = {"text": "1h x", "user_id": "user_nobody"}
    assert details(
        api_error(admin.post(f"/cases/{case['id']}/time-entries", json=someone_else), 404, "NOT_FOUND")
    ) == {"user_id": "User not found"}


def test_validation(admin: httpx.Client) -> None:
    case = billed_case(admin)
    url = f"/cases/{case['id']}/time-entries"
    assert "text" in details(
        api_error(admin.post(url, json={"text": "drafted answer"}), 422, "VALIDATION_ERROR")
    )
    assert "seconds" in details(
        api_error(admin.post(url, json={"description": "x"}), 422, "VALIDATION_ERROR")
    )
    bad_code = admin.post(url, json={"text": "1h x", "task_code": "Z999"})
    assert "task_code" in details(api_error(bad_code, 422, "VALIDATION_ERROR"))
    float_amount = admin.post(f"/cases/{case['id']}/expenses", json={"amount": 12.5, "category": "Filing"})
    assert "amount" in details(api_error(float_amount, 422, "VALIDATION_ERROR"))
    too_fine = admin.post(f"/cases/{case['id']}/expenses", json={"amount": "12.345", "category": "Filing"})
    assert details(api_error(too_fine, 422, "VALIDATION_ERROR")) == {"amount": "USD has 2 decimal places"}
    codes = ok(admin.get("/billing/utbms-codes"))
    assert codes["task"]["L210"] == "Pleadings" and codes["activity"]["A106"] == "Communicate (with client)"
    assert codes["expense"]["E112"] == "Court fees"


def test_timers_one_running_per_user_and_stop_makes_an_entry(api: Api, admin: httpx.Client) -> None:
    case = billed_case(admin)
    first = ok(admin.post("/timers", json={"case_id": case["id"], "description": "Reading the file"}), 201)
    assert first["running"] is True
    second = ok(admin.post("/timers", json={"case_id": case["id"], "description": "Call"}), 201)
    timers = {t["id"]: t for t in ok(admin.get("/timers"))}
    assert timers[first["id"]]["running"] is False and timers[second["id"]]["running"] is True
    api_error(admin.post(f"/timers/{first['id']}/pause"), 409, "CONFLICT")
    ok(admin.post(f"/timers/{first['id']}/resume"))
    assert {t["id"]: t["running"] for t in ok(admin.get("/timers"))} == {
        first["id"]: True,
        second["id"]: False,
    }
    # Kept in the database: what a restarted process reads is the same row.
    api.sql("UPDATE timers SET accumulated_seconds = 600 WHERE id = :id", id=second["id"])
    entry = ok(admin.post(f"/timers/{second['id']}/stop"), 201)
    assert entry["seconds"] == 600 and entry["description"] == "Call" and entry["state"] == "draft"
    assert entry["billed_seconds"] == 720 and entry["amount"] == "60.00"  # 0.2 h at 300.00
    api_error(admin.post(f"/timers/{second['id']}/stop"), 404, "NOT_FOUND")
    _, other = api.make_user("attorney")
    with api.client(token=other) as someone:
        api_error(someone.post(f"/timers/{first['id']}/stop"), 404, "NOT_FOUND")  # not theirs


def test_expenses_with_a_receipt(admin: httpx.Client) -> None:
    case = billed_case(admin)
    receipt = ok(
        admin.post(
            f"/cases/{case['id']}/documents",
            files={"file": ("receipt.txt", b"Court fee 435.00", "text/plain")},
        ),
        201,
    )
    expense = ok(
        admin.post(
            f"/cases/{case['id']}/expenses",
            json={
                "amount": "435.00",
                "category": "Court fees",
                "expense_code": "E112",
                "receipt_document_id": receipt["id"],
            },
        ),
        201,
    )
    assert (expense["amount"], expense["currency"], expense["receipt_document_id"]) == (
        "435.00",
        "USD",
        receipt["id"],
    )
    assert [e["id"] for e in ok(admin.get(f"/cases/{case['id']}/expenses"))] == [expense["id"]]
    other = new_case(admin)
    bad = admin.post(
        f"/cases/{other['id']}/expenses",
        json={"amount": "1.00", "category": "x", "receipt_document_id": receipt["id"]},
    )
    # Another matter's document is no document of this one: 404 naming the field.
    assert "receipt_document_id" in details(api_error(bad, 404, "NOT_FOUND"))


def test_access_permissions_and_walls(api: Api, admin: httpx.Client) -> None:
    case = billed_case(admin)
    entry = ok(admin.post(f"/cases/{case['id']}/time-entries", json={"text": "1h research"}), 201)
    _, viewer_token = api.make_user("viewer")
    with api.client(token=viewer_token) as v:
        auth_error(v.get(f"/cases/{case['id']}/time-entries"), 403, "AUTH_010")  # no read:billing
    lawyer, token = api.make_user("attorney")
    with api.client(token=token) as a:
        assert entry["id"] in [e["id"] for e in ok(a.get("/time-entries", params={"case_id": case["id"]}))]
        ok(
            admin.put(
                f"/cases/{case['id']}/access",
                json={"access": "firm", "walls": [{"subject_type": "user", "subject_id": lawyer["id"]}]},
            )
        )
        # Walled off: the matter's time does not exist for them.
        api_error(a.get(f"/time-entries/{entry['id']}"), 404, "NOT_FOUND")
        api_error(a.get(f"/cases/{case['id']}/time-entries"), 404, "NOT_FOUND")
        api_error(a.post(f"/cases/{case['id']}/time-entries", json={"text": "1h x"}), 404, "NOT_FOUND")
        assert ok(a.get("/time-entries", params={"case_id": case["id"]})) == []


def test_listing_parameters(admin: httpx.Client) -> None:
    case = billed_case(admin)
    word = unique("w")
    a = ok(
        admin.post(f"/cases/{case['id']}/time-entries", json={"text": f"1h {word}", "date": "2026-10-01"}),
        201,
    )
    b = ok(
        admin.post(
            f"/cases/{case['id']}/time-entries",
            json={"text": "2h other", "date": "2026-10-02", "billable": False},
        ),
        201,
    )
    url = f"/cases/{case['id']}/time-entries"
    assert [e["id"] for e in ok(admin.get(url))] == [b["id"], a["id"]]
    assert [e["id"] for e in ok(admin.get(url, params={"order": "asc"}))] == [a["id"], b["id"]]
    assert [e["id"] for e in ok(admin.get(url, params={"billable": "false"}))] == [b["id"]]
    assert [e["id"] for e in ok(admin.get(url, params={"search": word}))] == [a["id"]]
    assert ok(admin.get(url, params={"fields": "id,amount", "billable": "false"})) == [
        {"id": b["id"], "amount": "0.00"}
    ]
    api_error(admin.get(url, params={"state": "nope"}), 422, "VALIDATION_ERROR")


def test_a_running_timer_survives_a_restart(database: tuple[Path, str | None]) -> None:
    data_dir, url = database
    settings = make_settings(data_dir, url)
    with serving(settings) as first, first.admin() as admin:
        case = new_case(admin)
        timer = ok(admin.post("/timers", json={"case_id": case["id"], "description": "Deposition prep"}), 201)
    # Another process (a restart, or the next machine) on the same database.
    with serving(settings) as second, second.admin() as admin:
        [kept] = ok(admin.get("/timers"))
        assert kept["id"] == timer["id"] and kept["running"] is True
        later = wait_until(lambda: [t for t in ok(admin.get("/timers")) if t["elapsed_seconds"] >= 1])
        assert later[0]["elapsed_seconds"] >= 1
        entry = ok(admin.post(f"/timers/{timer['id']}/stop"), 201)
        assert entry["description"] == "Deposition prep" and entry["seconds"] >= 1
