"""Client money: deposits, payments out, transfers for an invoice, reversals (never edits), a
balance that never goes below zero under concurrency, and the three-way reconciliation."""

from __future__ import annotations

import datetime as dt
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

import httpx

from tests.billing.helpers import billed_case
from tests.support.assertions import api_error, auth_error, details, ok
from tests.support.servers import Api


def _balance(admin: httpx.Client, case_id: str) -> str:
    return admin.get(f"/cases/{case_id}/trust").headers["X-Trust-Balance"]


def _move(
    client: httpx.Client, case_id: str, kind: str, amount: str, reference: str = "ref"
) -> httpx.Response:
    return client.post(f"/cases/{case_id}/trust/{kind}", json={"amount": amount, "reference": reference})


def test_deposits_payments_out_and_reversals(api: Api, admin: httpx.Client) -> None:
    case = billed_case(admin)
    deposit = ok(_move(admin, case["id"], "deposits", "1000.00", "wire 4471"), 201)
    assert (deposit["kind"], deposit["amount"], deposit["balance_after"]) == ("deposit", "1000.00", "1000.00")
    assert deposit["contact_id"] == case["client"]["id"] and deposit["recorded_by"] == case["me"]["id"]
    [event] = api.events("trust.deposit", trust_entry_id=deposit["id"])
    assert event["amount"] == "1000.00" and event["balance_after"] == "1000.00"
    out = ok(_move(admin, case["id"], "withdrawals", "250.50", "cheque 101"), 201)
    assert (out["amount"], out["balance_after"]) == ("-250.50", "749.50")
    assert api.events("trust.withdrawal", trust_entry_id=out["id"])
    api_error(_move(admin, case["id"], "withdrawals", "749.51"), 409, "CONFLICT")
    assert _balance(admin, case["id"]) == "USD 749.50"

    # Never edited or deleted: no such paths; a mistake is reversed by a new entry.
    assert admin.patch(f"/trust/entries/{out['id']}", json={"amount": "1"}).status_code == 405
    assert admin.delete(f"/trust/entries/{out['id']}").status_code == 405
    reversal = ok(
        admin.post(f"/trust/entries/{out['id']}/reverse", json={"reference": "cheque 101 void"}), 201
    )
    assert (reversal["kind"], reversal["amount"], reversal["reverses_id"]) == (
        "reversal",
        "250.50",
        out["id"],
    )
    api_error(admin.post(f"/trust/entries/{out['id']}/reverse", json={"reference": "again"}), 409, "CONFLICT")
    api_error(
        admin.post(f"/trust/entries/{reversal['id']}/reverse", json={"reference": "x"}), 409, "CONFLICT"
    )
    ok(_move(admin, case["id"], "withdrawals", "1000.00"), 201)
    # Reversing the deposit now would overdraw the matter.
    api_error(admin.post(f"/trust/entries/{deposit['id']}/reverse", json={"reference": "x"}), 409, "CONFLICT")
    ledger = ok(admin.get(f"/cases/{case['id']}/trust", params={"order": "asc"}))
    assert [e["kind"] for e in ledger] == ["deposit", "withdrawal", "reversal", "withdrawal"]
    assert [e["balance_after"] for e in ledger] == ["1000.00", "749.50", "1000.00", "0.00"]
    # The client's ledger across their matters.
    other = ok(admin.post("/cases", json={"title": "Second matter", "client_name": None}), 201)
    ok(
        admin.post(
            f"/cases/{other['id']}/parties", json={"contact_id": case["client"]["id"], "role": "client"}
        ),
        201,
    )
    ok(_move(admin, other["id"], "deposits", "5.00"), 201)
    client_ledger = ok(
        admin.get("/trust/entries", params={"contact_id": case["client"]["id"], "order": "asc"})
    )
    assert [(e["case_id"], e["amount"]) for e in client_ledger][-2:] == [
        (case["id"], "-1000.00"),
        (other["id"], "5.00"),
    ]
    assert len(client_ledger) == 5
    for bad in ("0", "-5.00", "1.001"):
        assert "amount" in details(
            api_error(_move(admin, case["id"], "deposits", bad), 422, "VALIDATION_ERROR")
        )


def test_fifty_concurrent_withdrawals_never_overdraw(api: Api, admin: httpx.Client) -> None:
    case = billed_case(admin)
    ok(_move(admin, case["id"], "deposits", "1000.00"), 201)

    def withdraw(i: int) -> int:
        with api.admin() as c:
            return _move(c, case["id"], "withdrawals", "30.00", f"w{i}").status_code

    with ThreadPoolExecutor(50) as pool:
        codes = list(pool.map(withdraw, range(50)))
    # 1000.00 covers exactly 33 withdrawals of 30.00; the other 17 are refused.
    assert sorted(codes) == [201] * 33 + [409] * 17
    assert _balance(admin, case["id"]) == "USD 10.00"
    rows = api.sql(
        "SELECT count(*), sum(amount_minor), min(balance_after_minor) FROM trust_entries WHERE case_id = :c",
        c=case["id"],
    )
    count, total, lowest = rows[0]
    assert (count, total, lowest) == (34, 1000, 1000)  # minor units: 10.00 left, none below zero


def test_transfer_pays_an_approved_invoice(api: Api, admin: httpx.Client) -> None:
    case = billed_case(admin, rate="200.00")
    ok(admin.post(f"/cases/{case['id']}/time-entries", json={"text": "1h x", "date": "2026-07-01"}), 201)
    invoice = ok(
        admin.post(f"/cases/{case['id']}/invoices", json={"start": "2026-07-01", "end": "2026-07-31"}), 201
    )
    ok(_move(admin, case["id"], "deposits", "500.00"), 201)
    body = {"invoice_id": invoice["id"], "amount": "200.00", "reference": "to operating"}
    api_error(admin.post(f"/cases/{case['id']}/trust/transfers", json=body), 409, "INVALID_STATUS_TRANSITION")
    ok(admin.post(f"/invoices/{invoice['id']}/approve"))
    transfer = ok(admin.post(f"/cases/{case['id']}/trust/transfers", json=body), 201)
    assert (transfer["kind"], transfer["amount"], transfer["invoice_id"]) == (
        "transfer",
        "-200.00",
        invoice["id"],
    )
    paid = ok(admin.get(f"/invoices/{invoice['id']}"))
    assert (paid["state"], paid["balance"]) == ("paid", "0.00")
    [payment] = ok(admin.get(f"/invoices/{invoice['id']}/payments"))
    assert payment["method"] == "trust" and payment["trust_entry_id"] == transfer["id"]
    assert _balance(admin, case["id"]) == "USD 300.00"
    assert api.events("trust.transfer", trust_entry_id=transfer["id"])
    assert api.events("invoice.paid", invoice_id=invoice["id"])
    api_error(
        admin.post(f"/trust/entries/{transfer['id']}/reverse", json={"reference": "x"}), 409, "CONFLICT"
    )


def test_reconciliation(api: Api, admin: httpx.Client) -> None:
    month = dt.datetime.now(dt.UTC).strftime("%Y-%m")
    before = ok(admin.get("/trust/reconciliation", params={"month": month, "bank_balance": "0"}))
    journal = before["journal_balance"]
    one, two = billed_case(admin), billed_case(admin)
    ok(_move(admin, one["id"], "deposits", "1200.00"), 201)
    ok(_move(admin, one["id"], "withdrawals", "200.00"), 201)
    ok(_move(admin, two["id"], "deposits", "300.00"), 201)
    expected = str(Decimal(journal) + Decimal("1300.00"))
    report = ok(admin.get("/trust/reconciliation", params={"month": month, "bank_balance": expected}))
    assert report["agrees"] is True and report["differences"] == []
    assert (
        report["journal_balance"]
        == report["client_ledgers_balance"]
        == report["bank_statement_balance"]
        == expected
    )
    clients = {c["contact_id"]: c["balance"] for c in report["clients"]}
    assert clients[one["client"]["id"]] == "1000.00" and clients[two["client"]["id"]] == "300.00"

    # The bank says 10.00 less: listed. A matter's running balance tampered with: listed too.
    short = ok(
        admin.get(
            "/trust/reconciliation", params={"month": month, "bank_balance": str(Decimal(expected) - 10)}
        )
    )
    assert short["agrees"] is False
    assert [(d["kind"], d["difference"]) for d in short["differences"]] == [("bank_vs_journal", "-10.00")]
    api.sql(
        "UPDATE trust_entries SET amount_minor = amount_minor + 500 WHERE case_id = :c AND kind = 'deposit'",
        c=two["id"],
    )
    tampered = ok(admin.get("/trust/reconciliation", params={"month": month, "bank_balance": expected}))
    kinds = {(d["kind"], d["case_id"]) for d in tampered["differences"]}
    assert ("matter_ledger_vs_journal", two["id"]) in kinds and ("bank_vs_journal", None) in kinds
    api.sql("UPDATE trust_entries SET amount_minor = amount_minor - 500 WHERE case_id = :c", c=two["id"])
    # Earlier months do not see this month's money.
    assert (
        ok(admin.get("/trust/reconciliation", params={"month": "2001-01", "bank_balance": "0"}))[
            "journal_balance"
        ]
        == "0.00"
    )


def test_permissions_and_walls(api: Api, admin: httpx.Client) -> None:
    case = billed_case(admin)
    ok(_move(admin, case["id"], "deposits", "100.00"), 201)
    para, token = api.make_user("paralegal")
    with api.client(token=token) as p:
        assert _balance(p, case["id"]) == "USD 100.00"  # read:trust
        auth_error(_move(p, case["id"], "withdrawals", "1.00"), 403, "AUTH_010")  # no write:trust
        auth_error(
            p.get("/trust/reconciliation", params={"month": "2026-11", "bank_balance": "0"}), 403, "AUTH_011"
        )
        ok(
            admin.put(
                f"/cases/{case['id']}/access",
                json={"access": "firm", "walls": [{"subject_type": "user", "subject_id": para["id"]}]},
            )
        )
        api_error(p.get(f"/cases/{case['id']}/trust"), 404, "NOT_FOUND")


def test_a_matter_with_trust_records_or_numbered_invoices_is_not_purged(admin: httpx.Client) -> None:
    case = billed_case(admin)
    ok(_move(admin, case["id"], "deposits", "1.00"), 201)
    ok(_move(admin, case["id"], "withdrawals", "1.00"), 201)
    ok(admin.delete(f"/cases/{case['id']}"))
    refused = api_error(admin.delete(f"/admin/trash/{case['id']}"), 409, "CONFLICT")
    assert "trust money records" in refused["message"]
    ok(admin.post(f"/admin/trash/{case['id']}/restore"))
    assert ok(admin.get(f"/cases/{case['id']}/trust"))
