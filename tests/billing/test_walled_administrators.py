"""An administrator walled off from a matter sees nothing of its billing in the firm-wide views
(docs/billing.md#walled-administrators): time entries, invoices, trust entries, rates and the AR
aging report leave the matter out. The trust reconciliation must balance the firm's whole bank
account, so it counts the matter's money, without its identity: its ledger in one `withheld` line.
An administrator not walled sees all of it."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import httpx
import pytest

from tests.billing.helpers import billed_case
from tests.support.assertions import ok
from tests.support.servers import Api


@pytest.fixture
def walled(api: Api) -> Iterator[tuple[httpx.Client, dict[str, Any]]]:
    user, token = api.make_user("admin")
    with api.client(token=token) as client:
        yield client, user


def _walled_matter(admin: httpx.Client, user: dict[str, Any]) -> dict[str, Any]:
    case = billed_case(admin, rate="200.00")
    url = f"/cases/{case['id']}/time-entries"
    entry = ok(admin.post(url, json={"text": "1h merger diligence", "date": "2026-07-01"}), 201)
    invoice = ok(
        admin.post(f"/cases/{case['id']}/invoices", json={"start": "2026-07-01", "end": "2026-07-31"}), 201
    )
    invoice = ok(admin.post(f"/invoices/{invoice['id']}/approve"))
    ok(admin.post(f"/cases/{case['id']}/trust/deposits", json={"amount": "750.00", "reference": "W-9"}), 201)
    walls = [{"subject_type": "user", "subject_id": user["id"], "reason": "acted for the other side"}]
    ok(admin.put(f"/cases/{case['id']}/access", json={"access": "firm", "grants": [], "walls": walls}))
    return {"case": case, "entry": entry, "invoice": invoice}


def _views(client: httpx.Client, m: dict[str, Any]) -> dict[str, Any]:
    case = m["case"]
    aging = ok(client.get("/billing/reports/aging", params={"as_of": m["invoice"]["issued_on"]}))
    return {
        "time": ok(client.get("/time-entries", params={"case_id": case["id"]})),
        "invoices": ok(client.get("/invoices", params={"case_id": case["id"]})),
        "trust": ok(client.get("/trust/entries", params={"contact_id": case["client"]["id"]})),
        "rates": [r for r in ok(client.get("/billing/rates")) if r["case_id"] == case["id"]],
        "aging_rows": [r for r in aging["invoices"] if r["case_id"] == case["id"]],
        "aging_total": Decimal(aging["total"]),
    }


def test_the_firm_wide_billing_views_leave_the_walled_matter_out(
    admin: httpx.Client, walled: tuple[httpx.Client, dict[str, Any]]
) -> None:
    client, user = walled
    m = _walled_matter(admin, user)
    seen, hidden = _views(admin, m), _views(client, m)
    for view in ("time", "invoices", "trust", "rates", "aging_rows"):
        assert len(seen[view]) == 1, view
        assert hidden[view] == [], view
    assert seen["aging_total"] - hidden["aging_total"] == Decimal(m["invoice"]["total"])


def test_the_trust_reconciliation_counts_the_walled_matter_without_naming_it(
    admin: httpx.Client, walled: tuple[httpx.Client, dict[str, Any]]
) -> None:
    client, user = walled
    m = _walled_matter(admin, user)
    case_id, client_id = m["case"]["id"], m["case"]["client"]["id"]
    month = dt.date.today().strftime("%Y-%m")
    full = ok(admin.get("/trust/reconciliation", params={"month": month, "bank_balance": "0"}))
    params = {"month": month, "bank_balance": full["journal_balance"]}
    full = ok(admin.get("/trust/reconciliation", params=params))
    report = ok(client.get("/trust/reconciliation", params=params))

    # The firm's totals are the same for both: the bank account holds the walled matter's money.
    totals = ("journal_balance", "client_ledgers_balance", "agrees")
    assert [report[k] for k in totals] == [full[k] for k in totals]
    assert report["agrees"] is True
    assert {c["contact_id"]: c["balance"] for c in full["clients"]}[client_id] == "750.00"
    # ... and nothing of its identity reaches the walled administrator.
    assert case_id not in str(report) and client_id not in str(report)
    [withheld] = [c for c in report["clients"] if c["withheld"]]
    assert withheld == {"contact_id": None, "balance": "750.00", "withheld": True}
    assert not any(c["withheld"] for c in full["clients"])
