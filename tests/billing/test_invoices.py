"""Invoices: drafted from unbilled time and expenses, discounts, write-offs, tax, the states and
their 409s, frozen entries, gapless numbers under concurrency, payments, AR aging, PDF, LEDES."""

from __future__ import annotations

import datetime as dt
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from typing import Any

import httpx
from pypdf import PdfReader

from tests.billing.helpers import billed_case
from tests.support.assertions import api_error, details, ok
from tests.support.servers import Api

# The LEDES 1998B field list, in order, as the LEDES Oversight Committee publishes it
# (ledes.org, "LEDES 1998B Format"), typed here from the specification, not from the code.
LEDES_1998B_FIELDS = [
    "INVOICE_DATE",
    "INVOICE_NUMBER",
    "CLIENT_ID",
    "LAW_FIRM_MATTER_ID",
    "INVOICE_TOTAL",
    "BILLING_START_DATE",
    "BILLING_END_DATE",
    "INVOICE_DESCRIPTION",
    "LINE_ITEM_NUMBER",
    "EXP/FEE/INV_ADJ_TYPE",
    "LINE_ITEM_NUMBER_OF_UNITS",
    "LINE_ITEM_ADJUSTMENT_AMOUNT",
    "LINE_ITEM_TOTAL",
    "LINE_ITEM_DATE",
    "LINE_ITEM_TASK_CODE",
    "LINE_ITEM_EXPENSE_CODE",
    "LINE_ITEM_ACTIVITY_CODE",
    "TIMEKEEPER_ID",
    "LINE_ITEM_DESCRIPTION",
    "LAW_FIRM_ID",
    "LINE_ITEM_UNIT_COST",
    "TIMEKEEPER_NAME",
    "TIMEKEEPER_CLASSIFICATION",
    "CLIENT_MATTER_ID",
]


def _work(admin: httpx.Client, case: dict[str, Any]) -> dict[str, Any]:
    url = f"/cases/{case['id']}/time-entries"
    fee1 = ok(
        admin.post(
            url,
            json={
                "text": "1h drafted complaint",
                "date": "2026-10-05",
                "task_code": "L210",
                "activity_code": "A103",
            },
        ),
        201,
    )
    fee2 = ok(
        admin.post(url, json={"text": "0.5 call with client", "date": "2026-10-06", "activity_code": "A106"}),
        201,
    )
    ok(admin.post(url, json={"text": "2h internal", "date": "2026-10-07", "billable": False}), 201)
    ok(admin.post(url, json={"text": "1h next month", "date": "2026-11-03"}), 201)
    expense = ok(
        admin.post(
            f"/cases/{case['id']}/expenses",
            json={"amount": "435.00", "category": "Court fees", "expense_code": "E112", "date": "2026-10-05"},
        ),
        201,
    )
    return {"fees": [fee1, fee2], "expense": expense}


def test_invoice_lifecycle(api: Api, admin: httpx.Client) -> None:
    case = billed_case(admin, rate="300.00")
    work = _work(admin, case)
    invoice = ok(
        admin.post(
            f"/cases/{case['id']}/invoices",
            json={
                "start": "2026-10-01",
                "end": "2026-10-31",
                "discount_percent": "10",
                "tax_percent": "8.25",
            },
        ),
        201,
    )
    # Fees 300.00 + 150.00 and the 435.00 expense; non-billable and November time left out.
    assert [line["source_id"] for line in invoice["lines"]] == [
        *(f["id"] for f in work["fees"]),
        work["expense"]["id"],
    ]
    assert (invoice["state"], invoice["number"], invoice["subtotal"]) == ("draft", None, "885.00")
    assert (invoice["discount"], invoice["tax"], invoice["total"]) == ("88.50", "65.71", "862.21")
    assert sum(Decimal(line["discount"]) for line in invoice["lines"]) == Decimal("88.50")
    # A second draft finds nothing left to bill in the period: the matter's state, not the
    # request, is at fault (409).
    again = admin.post(f"/cases/{case['id']}/invoices", json={"start": "2026-10-01", "end": "2026-10-31"})
    assert details(api_error(again, 409, "CONFLICT")) == {"start": "Nothing unbilled in this period"}

    line = invoice["lines"][1]
    written = ok(admin.patch(f"/invoices/{invoice['id']}/lines/{line['id']}", json={"write_off": "50.00"}))
    # Taxable: 885.00 - 50.00 written off = 835.00, less 10% = 751.50, tax 62.00 (61.998750).
    assert (written["write_off"], written["discount"], written["tax"], written["total"]) == (
        "50.00",
        "83.50",
        "62.00",
        "813.50",
    )
    assert sum(Decimal(x["net"]) for x in written["lines"]) + Decimal(written["tax"]) == Decimal(
        written["total"]
    )

    # Moves that do not make sense are 409.
    api_error(admin.post(f"/invoices/{invoice['id']}/send"), 409, "INVALID_STATUS_TRANSITION")
    api_error(
        admin.post(f"/invoices/{invoice['id']}/payments", json={"amount": "1.00"}),
        409,
        "INVALID_STATUS_TRANSITION",
    )
    approved = ok(admin.post(f"/invoices/{invoice['id']}/approve"))
    assert approved["state"] == "approved" and approved["number"].startswith("INV-") and approved["issued_on"]
    [event] = api.events("invoice.approved", invoice_id=invoice["id"])
    assert event["total"] == "813.50" and event["number"] == approved["number"]
    api_error(admin.post(f"/invoices/{invoice['id']}/approve"), 409, "INVALID_STATUS_TRANSITION")
    api_error(admin.patch(f"/invoices/{invoice['id']}", json={"discount_percent": "0"}), 409, "CONFLICT")
    # Its entries are frozen.
    fee = work["fees"][0]
    assert ok(admin.get(f"/time-entries/{fee['id']}"))["state"] == "billed"
    api_error(admin.patch(f"/time-entries/{fee['id']}", json={"seconds": 60}), 409, "CONFLICT")
    api_error(admin.delete(f"/time-entries/{fee['id']}"), 409, "CONFLICT")

    ok(admin.post(f"/invoices/{invoice['id']}/send"))
    part = ok(
        admin.post(f"/invoices/{invoice['id']}/payments", json={"amount": "300.00", "reference": "wire 1"}),
        201,
    )
    assert part["amount"] == "300.00"
    assert ok(admin.get(f"/invoices/{invoice['id']}"))["balance"] == "513.50"
    # More than the balance: the invoice's state refuses it (409); nothing or less is invalid (422).
    too_much = admin.post(f"/invoices/{invoice['id']}/payments", json={"amount": "513.51"})
    assert details(api_error(too_much, 409, "CONFLICT")) == {"amount": "At most the balance, 513.50 USD"}
    for nothing in ("0", "0.00", "-5"):
        refused = admin.post(f"/invoices/{invoice['id']}/payments", json={"amount": nothing})
        assert "amount" in details(api_error(refused, 422, "VALIDATION_ERROR"))
    ok(admin.post(f"/invoices/{invoice['id']}/payments", json={"amount": "513.50"}), 201)
    paid = ok(admin.get(f"/invoices/{invoice['id']}"))
    assert (paid["state"], paid["balance"], paid["paid"]) == ("paid", "0.00", "813.50")
    assert api.events("invoice.paid", invoice_id=invoice["id"])
    api_error(admin.post(f"/invoices/{invoice['id']}/void"), 409, "INVALID_STATUS_TRANSITION")


def test_void_releases_entries_and_keeps_the_number(admin: httpx.Client) -> None:
    case = billed_case(admin)
    _work(admin, case)
    body = {"start": "2026-10-01", "end": "2026-10-31"}
    first = ok(admin.post(f"/cases/{case['id']}/invoices", json=body), 201)
    number = ok(admin.post(f"/invoices/{first['id']}/approve"))["number"]
    voided = ok(admin.post(f"/invoices/{first['id']}/void"))
    assert (voided["state"], voided["number"]) == ("void", number)
    second = ok(admin.post(f"/cases/{case['id']}/invoices", json=body), 201)
    assert second["total"] == first["total"]
    assert ok(admin.post(f"/invoices/{second['id']}/approve"))["number"] > number


def test_numbers_have_no_gaps_under_concurrency(api: Api, admin: httpx.Client) -> None:
    drafts = []
    for _ in range(12):
        case = billed_case(admin)
        ok(admin.post(f"/cases/{case['id']}/time-entries", json={"text": "1h x", "date": "2026-09-01"}), 201)
        drafts.append(
            ok(
                admin.post(
                    f"/cases/{case['id']}/invoices", json={"start": "2026-09-01", "end": "2026-09-30"}
                ),
                201,
            )
        )

    def approve(invoice_id: str) -> str:
        with api.admin() as c:
            return str(ok(c.post(f"/invoices/{invoice_id}/approve"))["number"])

    with ThreadPoolExecutor(12) as pool:
        numbers = sorted(pool.map(approve, [d["id"] for d in drafts]))
    values = [int(n.removeprefix("INV-")) for n in numbers]
    assert values == list(range(values[0], values[0] + 12))
    every = sorted(
        int(r[0].removeprefix("INV-"))
        for r in api.sql("SELECT number FROM invoices WHERE number IS NOT NULL")
    )
    assert every == list(range(1, len(every) + 1))  # the firm's numbers, no gap, no duplicate


def test_aging_report(api: Api, admin: httpx.Client) -> None:
    case = billed_case(admin, rate="100.00")
    ok(admin.post(f"/cases/{case['id']}/time-entries", json={"text": "1h x", "date": "2026-08-01"}), 201)
    invoice = ok(
        admin.post(f"/cases/{case['id']}/invoices", json={"start": "2026-08-01", "end": "2026-08-31"}), 201
    )
    ok(admin.post(f"/invoices/{invoice['id']}/approve"))
    ok(admin.post(f"/invoices/{invoice['id']}/payments", json={"amount": "40.00"}), 201)
    issued = dt.date.fromisoformat(ok(admin.get(f"/invoices/{invoice['id']}"))["issued_on"])
    for days, bucket in ((0, "0-30"), (30, "0-30"), (31, "31-60"), (61, "61-90"), (90, "61-90"), (91, "90+")):
        report = ok(
            admin.get(
                "/billing/reports/aging", params={"as_of": (issued + dt.timedelta(days=days)).isoformat()}
            )
        )
        [row] = [r for r in report["invoices"] if r["invoice_id"] == invoice["id"]]
        assert (row["bucket"], row["balance"], row["days"]) == (bucket, "60.00", days)
        assert sum(Decimal(v) for v in report["buckets"].values()) == Decimal(report["total"])
    before = ok(
        admin.get("/billing/reports/aging", params={"as_of": (issued - dt.timedelta(days=1)).isoformat()})
    )
    assert invoice["id"] not in [r["invoice_id"] for r in before["invoices"]]


def test_pdf_and_ledes(api: Api, admin: httpx.Client, tmp_path: Any) -> None:
    case = billed_case(admin, rate="300.00")
    _work(admin, case)
    invoice = ok(
        admin.post(
            f"/cases/{case['id']}/invoices",
            json={"start": "2026-10-01", "end": "2026-10-31", "discount_percent": "10"},
        ),
        201,
    )
    ok(admin.post(f"/invoices/{invoice['id']}/approve"))
    invoice = ok(admin.get(f"/invoices/{invoice['id']}"))

    response = admin.get(f"/invoices/{invoice['id']}/pdf")
    assert response.status_code == 200 and response.headers["content-type"] == "application/pdf"
    path = tmp_path / "invoice.pdf"
    path.write_bytes(response.content)
    text = PdfReader(path).pages[0].extract_text()
    for expected in (
        invoice["number"],
        "drafted complaint",
        invoice["total"],
        case["client"]["name"],
        case["case_number"],
    ):
        assert expected in text

    ledes = admin.get(f"/invoices/{invoice['id']}/ledes")
    assert ledes.status_code == 200
    lines = ledes.text.split("\r\n")
    assert lines[0] == "LEDES1998B[]" and lines[-1] == ""
    assert lines[1] == "|".join(LEDES_1998B_FIELDS) + "[]"
    rows = [
        dict(zip(LEDES_1998B_FIELDS, line.removesuffix("[]").split("|"), strict=True)) for line in lines[2:-1]
    ]
    assert len(rows) == 3 and all(line.endswith("[]") for line in lines[1:-1])
    assert [r["EXP/FEE/INV_ADJ_TYPE"] for r in rows] == ["F", "F", "E"]
    first = rows[0]
    assert first["INVOICE_NUMBER"] == invoice["number"] and first["CLIENT_ID"] == case["client"]["id"]
    assert (
        first["INVOICE_DATE"] == invoice["issued_on"].replace("-", "")
        and first["BILLING_START_DATE"] == "20261001"
    )
    assert (first["LINE_ITEM_TASK_CODE"], first["LINE_ITEM_ACTIVITY_CODE"], first["LINE_ITEM_UNIT_COST"]) == (
        "L210",
        "A103",
        "300.00",
    )
    assert first["LINE_ITEM_NUMBER_OF_UNITS"] == "1" and first["LINE_ITEM_ADJUSTMENT_AMOUNT"] == "-30.00"
    assert first["LINE_ITEM_TOTAL"] == "270.00" and first["TIMEKEEPER_ID"] == case["me"]["id"]
    assert rows[2]["LINE_ITEM_EXPENSE_CODE"] == "E112"
    # The invoice total is the sum of the line totals, on every line.
    assert {r["INVOICE_TOTAL"] for r in rows} == {str(sum(Decimal(r["LINE_ITEM_TOTAL"]) for r in rows))}
    assert Decimal(first["INVOICE_TOTAL"]) == Decimal(invoice["total"])  # no tax on this one


def test_access(api: Api, admin: httpx.Client) -> None:
    case = billed_case(admin)
    _work(admin, case)
    invoice = ok(
        admin.post(f"/cases/{case['id']}/invoices", json={"start": "2026-10-01", "end": "2026-10-31"}), 201
    )
    para, token = api.make_user("paralegal")
    with api.client(token=token) as p:
        ok(p.get(f"/invoices/{invoice['id']}"))
        assert p.post(f"/invoices/{invoice['id']}/approve").status_code == 403  # no approve:billing
        ok(
            admin.put(
                f"/cases/{case['id']}/access",
                json={"access": "firm", "walls": [{"subject_type": "user", "subject_id": para["id"]}]},
            )
        )
        api_error(p.get(f"/invoices/{invoice['id']}"), 404, "NOT_FOUND")
        api_error(p.get(f"/invoices/{invoice['id']}/pdf"), 404, "NOT_FOUND")
        assert invoice["id"] not in [i["id"] for i in ok(p.get("/invoices", params={"limit": 100}))]
