"""Seed a month of billing on a running Casefile and write the samples docs/billing.md shows:
an invoice PDF (rendered to PNG with pdftoppm by the caller), its LEDES 1998B file, and the
month's three-way reconciliation.

    python scripts/billing_samples.py http://127.0.0.1:18601 admin@example.com PASSWORD OUTDIR
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path

import httpx


def main(base: str, email: str, password: str, out: Path) -> None:
    api = httpx.Client(base_url=f"{base}/api/v1", timeout=30)
    token = api.post("/auth/login", json={"email": email, "password": password}).json()["data"]["token"]
    api.headers["Authorization"] = f"Bearer {token}"

    def ok(response: httpx.Response) -> dict:
        assert response.is_success, response.text
        return response.json()["data"]

    me = ok(api.get("/users/me"))
    client = ok(api.post("/contacts", json={"kind": "organization", "name": "Northwind Traders Ltd"}))
    case = ok(
        api.post(
            "/cases",
            json={
                "title": "Northwind v. Contoso (supply contract)",
                "case_number": "2026-CV-0412",
                "case_type": "civil",
                "status": "active",
                "priority": "high",
                "client_name": None,
            },
        )
    )
    ok(api.post(f"/cases/{case['id']}/parties", json={"contact_id": client["id"], "role": "client"}))
    ok(api.put("/billing/rates", json={"user_id": me["id"], "amount": "350.00"}))
    ok(api.put("/billing/rates", json={"user_id": me["id"], "amount": "325.00", "contact_id": client["id"]}))
    today = dt.datetime.now(dt.UTC).date()
    start = today.replace(day=1)
    lines = [
        ("1h20 reviewed supply agreement and delivery schedules", "L110", "A104"),
        ("0.3 call with client on breach notice", "L120", "A106"),
        ("2h10 drafted complaint", "L210", "A103"),
        ("0.5 revised complaint per client comments", "L210", "A103"),
        ("45m research on UCC 2-609 adequate assurance", "L120", "A102"),
    ]
    for text, task, activity in lines:
        ok(
            api.post(
                f"/cases/{case['id']}/time-entries",
                json={"text": text, "date": start.isoformat(), "task_code": task, "activity_code": activity},
            )
        )
    ok(
        api.post(
            f"/cases/{case['id']}/expenses",
            json={
                "amount": "435.00",
                "category": "Court fees",
                "expense_code": "E112",
                "description": "Filing fee, Superior Court",
                "date": start.isoformat(),
            },
        )
    )
    ok(
        api.post(
            f"/cases/{case['id']}/expenses",
            json={
                "amount": "62.40",
                "category": "Delivery",
                "expense_code": "E107",
                "description": "Courier to opposing counsel",
                "date": start.isoformat(),
            },
        )
    )
    invoice = ok(
        api.post(
            f"/cases/{case['id']}/invoices",
            json={
                "start": start.isoformat(),
                "end": today.isoformat(),
                "discount_percent": "5",
                "tax_percent": "0",
            },
        )
    )
    ok(api.patch(f"/invoices/{invoice['id']}/lines/{invoice['lines'][1]['id']}", json={"write_off": "32.50"}))
    invoice = ok(api.post(f"/invoices/{invoice['id']}/approve"))
    ok(api.post(f"/invoices/{invoice['id']}/send"))
    ok(api.post(f"/cases/{case['id']}/trust/deposits", json={"amount": "5000.00", "reference": "Wire 88311"}))
    ok(
        api.post(
            f"/cases/{case['id']}/trust/transfers",
            json={"invoice_id": invoice["id"], "amount": "1500.00", "reference": "Transfer to operating"},
        )
    )
    ok(
        api.post(
            f"/cases/{case['id']}/trust/withdrawals",
            json={"amount": "250.00", "reference": "Cheque 1007", "description": "Expert retainer"},
        )
    )
    (out / "invoice.pdf").write_bytes(api.get(f"/invoices/{invoice['id']}/pdf").content)
    (out / "invoice.ledes.txt").write_bytes(api.get(f"/invoices/{invoice['id']}/ledes").content)
    report = ok(
        api.get("/trust/reconciliation", params={"month": today.strftime("%Y-%m"), "bank_balance": "3250.00"})
    )
    (out / "reconciliation.json").write_text(json.dumps(report, indent=2) + "\n")
    aging = ok(api.get("/billing/reports/aging"))
    (out / "aging.json").write_text(json.dumps(aging, indent=2) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], Path(sys.argv[4]))
