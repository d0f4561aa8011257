"""A legal hold freezes the matter's time and billing records (docs/billing.md#legal-holds):
changing or deleting a time entry, changing a draft invoice or writing off one of its lines, and
voiding an invoice are 409 `LEGAL_HOLD`, for an administrator too, and nothing changes. What only
adds to the record stays possible: new time and expenses, drafting and approving an invoice, a
payment, a trust deposit and its reversal. Released, the same changes succeed."""

from __future__ import annotations

from typing import Any

import httpx

from tests.billing.helpers import billed_case
from tests.support.assertions import api_error, ok


def _matter(admin: httpx.Client) -> dict[str, Any]:
    case = billed_case(admin)
    url = f"/cases/{case['id']}/time-entries"
    for day in ("2026-08-04", "2026-09-04", "2026-10-05"):
        ok(admin.post(url, json={"text": "1h drafted answer", "date": day}), 201)
    expense = {"amount": "35.00", "category": "Court fees", "date": "2026-10-05"}
    ok(admin.post(f"/cases/{case['id']}/expenses", json=expense), 201)
    loose = ok(admin.post(url, json={"text": "0.5 call with client", "date": "2026-11-03"}), 201)

    def invoice(start: str, end: str, approve: bool) -> dict[str, Any]:
        drafted = ok(admin.post(f"/cases/{case['id']}/invoices", json={"start": start, "end": end}), 201)
        return ok(admin.post(f"/invoices/{drafted['id']}/approve")) if approve else drafted

    return {
        "case": case["id"],
        "entry": loose["id"],
        "to_pay": invoice("2026-08-01", "2026-08-31", approve=True),
        "to_void": invoice("2026-09-01", "2026-09-30", approve=True),
        "draft": invoice("2026-10-01", "2026-10-31", approve=False),
    }


def _changes(m: dict[str, Any]) -> list[tuple[str, str, dict[str, Any] | None]]:
    draft = m["draft"]
    return [
        ("PATCH", f"/time-entries/{m['entry']}", {"description": "Rewritten", "seconds": 7200}),
        ("PATCH", f"/invoices/{draft['id']}", {"discount_percent": "50"}),
        ("PATCH", f"/invoices/{draft['id']}/lines/{draft['lines'][0]['id']}", {"write_off": "100.00"}),
        ("POST", f"/invoices/{m['to_void']['id']}/void", None),
        ("DELETE", f"/time-entries/{m['entry']}", None),
    ]


def _record(admin: httpx.Client, m: dict[str, Any]) -> dict[str, Any]:
    return {
        "entry": ok(admin.get(f"/time-entries/{m['entry']}")),
        "draft": ok(admin.get(f"/invoices/{m['draft']['id']}")),
        "to_void": ok(admin.get(f"/invoices/{m['to_void']['id']}")),
        "entries": ok(admin.get(f"/cases/{m['case']}/time-entries", params={"limit": "100"})),
    }


def test_a_hold_freezes_the_matters_billing_records_until_released(admin: httpx.Client) -> None:
    m = _matter(admin)
    before = _record(admin, m)
    hold = ok(admin.post(f"/cases/{m['case']}/holds", json={"reason": "fee dispute expected"}), 201)

    for method, path, body in _changes(m):
        response = admin.request(method, path, json=body) if body else admin.request(method, path)
        error = api_error(response, 409, "LEGAL_HOLD")
        assert "legal hold" in error["message"], (method, path)
    assert _record(admin, m) == before

    # Adding to the record is still possible: it alters and destroys nothing already there.
    case = m["case"]
    ok(admin.post(f"/cases/{case}/time-entries", json={"text": "0.2 read the hold notice"}), 201)
    ok(admin.post(f"/cases/{case}/expenses", json={"amount": "5.00", "category": "Copies"}), 201)
    payment = {"amount": "10.00", "reference": "Wire 1"}
    ok(admin.post(f"/invoices/{m['to_pay']['id']}/payments", json=payment), 201)
    deposit = ok(
        admin.post(f"/cases/{case}/trust/deposits", json={"amount": "500.00", "reference": "CHQ 77"}), 201
    )
    ok(admin.post(f"/trust/entries/{deposit['id']}/reverse", json={"reference": "Bounced"}), 201)

    ok(admin.post(f"/holds/{hold['id']}/release"))
    for method, path, body in _changes(m):
        response = admin.request(method, path, json=body) if body else admin.request(method, path)
        assert response.status_code == 200, (method, path, response.text)
    api_error(admin.get(f"/time-entries/{m['entry']}"), 404, "NOT_FOUND")
    assert ok(admin.get(f"/invoices/{m['to_void']['id']}"))["state"] == "void"
