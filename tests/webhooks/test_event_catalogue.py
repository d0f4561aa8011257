"""`GET /webhook-event-types` (issue 27, item 2): every event with its description and the JSON
Schema of its `data`; and real deliveries, made by real operations through the API, checked
against those schemas, on both databases: every event of the catalogue is made, by the API, the
AI worker and `casefile backup`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import httpx
import jsonschema_rs
from fastapi import FastAPI

from casefile.events.catalogue import EVENT_NAMES
from tests.support.assertions import ok
from tests.support.factories import new_case, unique, upload
from tests.support.processes import CASEFILE, settings_env
from tests.support.receivers import Receiver, receiver_server
from tests.support.servers import Api
from tests.support.waiting import wait_until

SECRET = "whsec_catalogue_0123456789abcdef"


def failing_route(app: FastAPI) -> None:
    """A route that fails, for the `system.error` event."""

    @app.get("/api/v1/boom")
    async def boom() -> None:
        raise RuntimeError("a bug, for the catalogue test")


def test_the_catalogue_lists_every_event_with_a_schema(api: Api, admin: httpx.Client) -> None:
    listed = ok(admin.get("/webhook-event-types"))
    assert [t["name"] for t in listed] == list(EVENT_NAMES)
    for event_type in listed:
        assert event_type["description"] and event_type["group"] == event_type["name"].split(".")[0]
        assert event_type["data_schema"]["type"] == "object"
        assert event_type["data_schema"]["required"]
    created = next(t for t in listed if t["name"] == "case.created")["data_schema"]
    assert created["properties"]["case_id"] == {"title": "Case Id", "type": "string"}
    # Any authenticated caller may read it; nobody else.
    _, token = api.make_user("viewer")
    with api.client(token=token) as viewer:
        assert len(ok(viewer.get("/webhook-event-types"))) == len(EVENT_NAMES)
    with api.client() as anonymous:
        assert anonymous.get("/webhook-event-types").status_code == 401


def test_real_deliveries_of_every_event_match_their_schemas(make_server, tmp_path: Path) -> None:
    api = make_server(app_hook=failing_route, webhook_disable_after_failures=1, ai_enabled=True)
    with api.admin() as admin, receiver_server() as everything, receiver_server() as gone:
        schemas = {t["name"]: t["data_schema"] for t in ok(admin.get("/webhook-event-types"))}
        hook = {"name": "all", "url": everything.url, "events": ["*"], "secret": SECRET}
        ok(admin.post("/admin/webhooks", json=hook), 201)
        _make_every_event(api, admin, gone)
        _process_documents_and_back_up(api, admin, tmp_path)
        expected = set(EVENT_NAMES)
        try:
            wait_until(lambda: expected <= _names(everything), timeout=180)
        except AssertionError:
            raise AssertionError(f"never delivered: {sorted(expected - _names(everything))}") from None
        for received in everything.received():
            payload = received.json()
            validator = jsonschema_rs.validator_for(schemas[payload["event"]])
            errors = [e.message for e in validator.iter_errors(payload["data"])]
            assert not errors, (payload["event"], errors, json.dumps(payload["data"]))


def test_a_purged_documents_events_still_match_their_schemas(make_server) -> None:
    """A purge rewrites the document's earlier events without its text (decision 0028), and a
    delivery still pending sends them so: the catalogue admits that payload, and only with
    `erased`."""
    api = make_server()
    with api.admin() as admin:
        schemas = {t["name"]: t["data_schema"] for t in ok(admin.get("/webhook-event-types"))}
        case = new_case(admin)
        document = ok(upload(admin, case["id"], b"A letter about the lease.\n", "letter.txt"), 201)
        ok(admin.patch(f"/documents/{document['id']}", json={"title": "Letter about the lease"}))
        full = api.events("document.updated", document_id=document["id"])[0]
        ok(admin.delete(f"/documents/{document['id']}"))
        ok(admin.delete(f"/admin/trash/{document['id']}"))
    erased = 0
    for name in ("document.uploaded", "document.updated", "document.deleted", "document.purged"):
        validator = jsonschema_rs.validator_for(schemas[name])
        for payload in api.events(name, document_id=document["id"]):
            assert validator.is_valid(payload), (name, payload)
            erased += payload.get("erased", False)
    assert erased >= 3  # uploaded, updated and deleted were rewritten
    # Without `erased`, a payload that lacks the text is still refused.
    updated = jsonschema_rs.validator_for(schemas["document.updated"])
    assert updated.is_valid(full)
    assert not updated.is_valid({key: value for key, value in full.items() if key != "changes"})


def _names(receiver: Receiver) -> set[str]:
    return {r.json()["event"] for r in receiver.received()}


def _make_billing_events(admin: httpx.Client) -> None:
    """time_entry.*, expense.created, invoice.*, trust.*: on a matter of their own (one with trust
    records or numbered invoices is never purged)."""
    me = ok(admin.get("/users/me"))
    ok(admin.put("/billing/rates", json={"user_id": me["id"], "amount": "100.00"}))
    case_id = ok(admin.post("/cases", json={"title": "Billing events", "client_name": "Acme"}), 201)["id"]
    entry = ok(admin.post(f"/cases/{case_id}/time-entries", json={"text": "1h x", "date": "2026-10-01"}), 201)
    ok(admin.patch(f"/time-entries/{entry['id']}", json={"seconds": 7200}))
    gone = ok(admin.post(f"/cases/{case_id}/time-entries", json={"text": "1h y", "date": "2026-10-01"}), 201)
    ok(admin.delete(f"/time-entries/{gone['id']}"))
    ok(
        admin.post(
            f"/cases/{case_id}/expenses", json={"amount": "10.00", "category": "Copies", "date": "2026-10-01"}
        ),
        201,
    )
    period = {"start": "2026-10-01", "end": "2026-10-31"}
    voided = ok(admin.post(f"/cases/{case_id}/invoices", json=period), 201)
    ok(admin.post(f"/invoices/{voided['id']}/void"))
    invoice = ok(admin.post(f"/cases/{case_id}/invoices", json=period), 201)  # 210.00
    ok(admin.post(f"/invoices/{invoice['id']}/approve"))
    ok(admin.post(f"/invoices/{invoice['id']}/send"))
    ok(admin.post(f"/cases/{case_id}/trust/deposits", json={"amount": "500.00", "reference": "r"}), 201)
    out = ok(
        admin.post(f"/cases/{case_id}/trust/withdrawals", json={"amount": "10.00", "reference": "r"}), 201
    )
    ok(admin.post(f"/trust/entries/{out['id']}/reverse", json={"reference": "r"}), 201)
    transfer = {"invoice_id": invoice["id"], "amount": "110.00", "reference": "r"}
    ok(admin.post(f"/cases/{case_id}/trust/transfers", json=transfer), 201)
    ok(admin.post(f"/invoices/{invoice['id']}/payments", json={"amount": "100.00"}), 201)


def _make_every_event(api: Api, admin: httpx.Client, gone: Receiver) -> None:
    _make_billing_events(admin)
    # export.completed: a matter of its own, never deleted, exported while the rest goes on.
    exported = ok(admin.post("/cases", json={"title": "Exported", "client_name": "Acme"}), 201)["id"]
    ok(admin.post(f"/cases/{exported}/exports"), 202)
    user, token = api.make_user("attorney")
    case = ok(
        admin.post("/cases", json={"title": "Catalogue", "case_type": "civil", "client_name": "Acme"}), 201
    )
    case_id = case["id"]
    ok(admin.patch(f"/cases/{case_id}", json={"title": "Catalogue, renamed"}))
    ok(admin.patch(f"/cases/{case_id}", json={"status": "pending"}))
    ok(admin.post(f"/cases/{case_id}/assignees", json={"user_id": user["id"]}))
    ok(admin.put(f"/cases/{case_id}/access", json={"access": "restricted"}))
    ok(admin.put(f"/cases/{case_id}/access", json={"access": "firm"}))
    hold = ok(admin.post(f"/cases/{case_id}/holds", json={"reason": "Litigation expected"}), 201)
    ok(admin.post(f"/holds/{hold['id']}/release", json={}))
    document = ok(
        admin.post(f"/cases/{case_id}/documents", files={"file": ("memo.txt", b"A memo.", "text/plain")}), 201
    )
    ok(admin.patch(f"/documents/{document['id']}", json={"title": "Memo, renamed"}))
    ok(admin.delete(f"/documents/{document['id']}"))
    ok(admin.post(f"/admin/trash/{document['id']}/restore"))
    ok(admin.delete(f"/documents/{document['id']}"))
    ok(admin.delete(f"/admin/trash/{document['id']}"))
    group = ok(admin.post("/admin/groups", json={"name": unique("team")}), 201)
    ok(admin.patch(f"/admin/groups/{group['id']}", json={"name": unique("team")}))
    ok(admin.put(f"/admin/groups/{group['id']}/members", json={"user_ids": [user["id"]]}))
    ok(admin.delete(f"/admin/groups/{group['id']}"))
    with api.client(token=token) as attorney:
        ok(attorney.post("/auth/logout"))
    ok(admin.patch(f"/users/{user['id']}", json={"role": "paralegal"}))
    window = {"scheduled_start": "2027-01-03T08:00:00Z", "scheduled_end": "2027-01-03T09:00:00Z"}
    ok(admin.patch("/admin/config", json={"maintenance": {**window, "message": "Upgrade on Sunday"}}))
    with api.client() as c:
        assert c.get(
            api.root + "/api/v1/boom", headers={"Authorization": f"Bearer {api.admin_token}"}
        ).status_code
    contact = ok(admin.post("/contacts", json={"name": unique("Witness ")}), 201)
    ok(admin.patch(f"/contacts/{contact['id']}", json={"name": unique("Witness ")}))
    party = ok(
        admin.post(f"/cases/{case_id}/parties", json={"contact_id": contact["id"], "role": "witness"}), 201
    )
    ok(admin.delete(f"/cases/{case_id}/parties/{party['id']}"))
    ok(admin.delete(f"/contacts/{contact['id']}"))
    ok(admin.post("/conflict-checks", json={"names": ["Acme"], "case_id": case_id}), 201)
    note = ok(admin.post(f"/cases/{case_id}/notes", json={"body": "Called opposing counsel."}), 201)
    ok(admin.patch(f"/notes/{note['id']}", json={"pinned": True}))
    ok(admin.delete(f"/notes/{note['id']}"))
    task = ok(admin.post(f"/cases/{case_id}/tasks", json={"title": "Draft the answer"}), 201)
    ok(admin.patch(f"/tasks/{task['id']}", json={"priority": "high"}))
    ok(admin.delete(f"/tasks/{task['id']}"))
    body = {"rule_set": "frcp", "trigger": "service", "trigger_date": "2026-12-04", "save": True}
    saved = ok(admin.post(f"/cases/{case_id}/deadlines/compute", json=body))
    path = f"/cases/{case_id}/deadlines/{saved['deadline_id']}"
    ok(admin.patch(path, json={"trigger_date": "2026-11-05"}))
    ok(admin.delete(path))
    field_set = ok(admin.post("/admin/custom-field-sets", json={"name": unique("Set ")}), 201)
    ok(admin.patch(f"/admin/custom-field-sets/{field_set['id']}", json={"name": unique("Set ")}))
    field = {"name": unique("court_"), "label": "Court", "field_type": "text"}
    field_id = ok(admin.post("/admin/custom-fields", json=field), 201)["id"]
    ok(admin.patch(f"/admin/custom-fields/{field_id}", json={"field_set_id": field_set["id"]}))
    ok(admin.delete(f"/cases/{case_id}"))
    ok(admin.post(f"/admin/trash/{case_id}/restore"))
    ok(admin.delete(f"/cases/{case_id}"))
    ok(admin.delete(f"/admin/trash/{case_id}"))
    # A receiver that is gone: webhook.failing then webhook.disabled (after one failure here).
    gone.script = [410]
    hook: dict[str, Any] = {"name": "gone", "url": gone.url, "events": ["case.created"], "secret": SECRET}
    ok(admin.post("/admin/webhooks", json=hook), 201)
    ok(admin.post("/cases", json={"title": "For the gone receiver"}), 201)


def _process_documents_and_back_up(api: Api, admin: httpx.Client, tmp_path: Path) -> None:
    """The AI worker's events (one document processed, one damaged PDF failing) and
    `system.backup_completed` from `casefile backup`, as an operator runs it."""
    case_id = ok(admin.post("/cases", json={"title": "Processed"}), 201)["id"]
    text = b"Engagement letter. Acme Corp retains the firm for the Smith v. Jones dispute."
    broken = b"%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n" + b"\x13\x37" * 200
    for name, content, kind in (
        ("letter.txt", text, "text/plain"),
        ("broken.pdf", broken, "application/pdf"),
    ):
        ok(admin.post(f"/cases/{case_id}/documents", files={"file": (name, content, kind)}), 201)
    backup = subprocess.run(
        [CASEFILE, "backup", "--output", str(tmp_path / "backup.tar")],
        env=settings_env(api.settings),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert backup.returncode == 0, backup.stderr
