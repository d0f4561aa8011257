"""No existence oracle: every route that names a matter's things (a case, a document, a note, a
task, a party, a deadline, a hold, a job, a time entry, an invoice, a trust entry) answers a
caller who may not see the matter exactly as it answers for a thing that does not exist: same
status, same body shape, same code and message. And every such refusal leaves a `denied` entry in
the audit trail, the same way on every route.

The routes are taken from the application itself (`app.routes`), so a route added later is walked
too; a route the test does not know how to call fails it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from fastapi.routing import APIRoute, iter_route_contexts

from casefile.clock import new_id
from casefile.routing import CURRENT_PREFIX
from tests.support.assertions import ok
from tests.support.factories import new_case, unique, upload
from tests.support.servers import Api

# The path parameters that name a matter or one of its things, with the prefix of their ids.
MATTER_PARAMETERS = {
    "case_id": "case",
    "document_id": "doc",
    "note_id": "note",
    "task_id": "task",
    "party_id": "party",
    "deadline_id": "dl",
    "hold_id": "hold",
    "job_id": "job",
    "invoice_id": "inv",
    "entry_id": "time",  # a time entry; under /trust/entries/, a trust entry (TRUST_ENTRY)
}
TRUST_ENTRY = ("/trust/entries/{entry_id}", "trust_entry_id", "trx")
# `entry_id` names an audit entry elsewhere (its inclusion proof): tests/cases/test_walled_administrators.py.
BILLING_ENTRIES = ("/time-entries/{entry_id}", TRUST_ENTRY[0])
# Not a matter's thing though a parameter's name says so: a bulk job spans many cases and is its
# requester's (404 to anyone else, an administrator aside: tests/cases/test_bulk_actions.py).
NOT_MATTER_ROUTES = {"/cases/bulk/{job_id}"}

# A body that would be accepted for a thing the caller may see (so that the refusal is the one
# about the thing, not about the body).
BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("PATCH", "/cases/{case_id}"): {"title": "Renamed"},
    ("PUT", "/cases/{case_id}"): {"title": "Renamed"},
    ("POST", "/cases/{case_id}/assignees"): {"user_id": "usr_none"},
    ("PUT", "/cases/{case_id}/access"): {"access": "firm", "grants": [], "walls": []},
    ("POST", "/cases/{case_id}/ask"): {"question": "Who is the buyer?"},
    ("POST", "/cases/{case_id}/summarize"): {},
    ("POST", "/documents/{document_id}/process"): {},
    ("PATCH", "/documents/{document_id}"): {"title": "Renamed"},
    ("PUT", "/documents/{document_id}"): {"title": "Renamed"},
    ("POST", "/cases/{case_id}/holds"): {"reason": "litigation expected"},
    ("POST", "/holds/{hold_id}/release"): {},
    ("POST", "/cases/{case_id}/parties"): {"contact_id": "ct_none", "role": "witness"},
    ("POST", "/cases/{case_id}/notes"): {"body": "A note"},
    ("PATCH", "/notes/{note_id}"): {"body": "Changed"},
    ("POST", "/cases/{case_id}/tasks"): {"title": "A task"},
    ("PATCH", "/tasks/{task_id}"): {"title": "Changed"},
    ("POST", "/cases/{case_id}/deadlines/compute"): {
        "rule_set": "frcp",
        "trigger": "service",
        "trigger_date": "2026-12-02",
    },
    ("PATCH", "/cases/{case_id}/deadlines/{deadline_id}"): {"trigger_date": "2026-12-09"},
    ("POST", "/cases/{case_id}/time-entries"): {"seconds": 600, "description": "Call with client"},
    ("POST", "/cases/{case_id}/expenses"): {"amount": "12.50", "category": "filing fees"},
    ("POST", "/cases/{case_id}/invoices"): {"start": "2026-11-01", "end": "2026-11-30"},
    ("POST", "/cases/{case_id}/trust/deposits"): {"amount": "100.00", "reference": "CHQ 1"},
    ("POST", "/cases/{case_id}/trust/withdrawals"): {"amount": "1.00", "reference": "CHQ 2"},
    ("POST", "/cases/{case_id}/trust/transfers"): {
        "invoice_id": "inv_none",
        "amount": "1.00",
        "reference": "TR 1",
    },
    ("PATCH", "/time-entries/{entry_id}"): {"description": "Changed"},
    ("PATCH", "/invoices/{invoice_id}"): {"discount_percent": "5"},
    ("PATCH", "/invoices/{invoice_id}/lines/{line_id}"): {"write_off": "1.00"},
    ("POST", "/invoices/{invoice_id}/approve"): {},
    ("POST", "/invoices/{invoice_id}/send"): {},
    ("POST", "/invoices/{invoice_id}/void"): {},
    ("POST", "/invoices/{invoice_id}/payments"): {"amount": "1.00"},
    ("POST", "/trust/entries/{entry_id}/reverse"): {"reference": "Bounced"},
    ("POST", "/cases/{case_id}/exports"): {},
}
UPLOADS = {("POST", "/cases/{case_id}/documents"), ("POST", "/documents/{document_id}/versions")}
# An administrator reads and replaces the access settings of any case, one they are walled off
# from included: that is how walls are managed (docs/api-conventions.md#matter-access). They show
# who may see the matter, nothing of it. (Walking them would also lift the wall.)
WALL_MANAGEMENT = {("GET", "/cases/{case_id}/access"), ("PUT", "/cases/{case_id}/access")}


def matter_routes(api: Api, caller: str = "outsider") -> list[tuple[str, str]]:
    """(method, path template without the version prefix) of every route naming a matter's thing
    (for a walled administrator, but the wall's management)."""
    found = []
    for route in iter_route_contexts(api.app.routes):
        path = route.path_format or ""
        if not isinstance(route.original_route, APIRoute) or not path.startswith(CURRENT_PREFIX):
            continue
        named = [name for name in MATTER_PARAMETERS if f"{{{name}}}" in path]
        relative = path.removeprefix(CURRENT_PREFIX)
        if relative in NOT_MATTER_ROUTES or not named:
            continue
        if named == ["entry_id"] and not relative.startswith(BILLING_ENTRIES):
            continue
        found += [(method, path.removeprefix(CURRENT_PREFIX)) for method in sorted(route.methods or ())]
    return [r for r in found if caller != "walled_admin" or r not in WALL_MANAGEMENT]


@dataclass
class Hidden:
    ids: dict[str, str]  # path parameter -> an id of the hidden matter
    callers: dict[str, tuple[httpx.Client, str]]  # name -> (client, user id)
    admin: httpx.Client


@pytest.fixture(scope="module")
def hidden(api: Api) -> Iterator[Hidden]:
    admin = api.admin()
    case = new_case(admin, title=unique("Hidden matter "))
    case_id = case["id"]
    document = ok(upload(admin, case_id), 201)
    note = ok(admin.post(f"/cases/{case_id}/notes", json={"body": "Privileged"}), 201)
    task = ok(admin.post(f"/cases/{case_id}/tasks", json={"title": "Prepare"}), 201)
    contact = ok(admin.post("/contacts", json={"name": unique("Witness "), "kind": "person"}), 201)
    party = ok(
        admin.post(f"/cases/{case_id}/parties", json={"contact_id": contact["id"], "role": "witness"}), 201
    )
    saved = ok(
        admin.post(
            f"/cases/{case_id}/deadlines/compute",
            json={"rule_set": "frcp", "trigger": "service", "trigger_date": "2026-12-02", "save": True},
        )
    )
    # Its billing: a time entry, an invoice (of September's time) and a trust deposit.
    me = ok(admin.get("/users/me"))
    ok(admin.put("/billing/rates", json={"user_id": me["id"], "amount": "200.00", "case_id": case_id}))
    time_url = f"/cases/{case_id}/time-entries"
    entry = ok(admin.post(time_url, json={"text": "1h review", "date": "2026-10-05"}), 201)
    ok(admin.post(time_url, json={"text": "1h draft", "date": "2026-09-05"}), 201)
    period = {"start": "2026-09-01", "end": "2026-09-30"}
    invoice = ok(admin.post(f"/cases/{case_id}/invoices", json=period), 201)
    money = {"amount": "50.00", "reference": "CHQ 1"}
    deposit = ok(admin.post(f"/cases/{case_id}/trust/deposits", json=money), 201)
    hold = ok(admin.post(f"/cases/{case_id}/holds", json={"reason": "expected litigation"}), 201)
    # A finished job of the matter (the shared server runs no AI: one is written as a worker would).
    job_id, now = new_id("job"), datetime.now(UTC).replace(tzinfo=None)
    api.sql(
        "INSERT INTO ai_jobs (id, kind, document_id, case_id, status, attempts_made, max_attempts,"
        " next_attempt_at, lease_token, created_at, updated_at, finished_at)"
        " VALUES (:id, 'document', :document, :case, 'succeeded', 1, 3, :now, 1, :now, :now, :now)",
        id=job_id,
        document=document["id"],
        case=case_id,
        now=now,
    )

    outsider, outsider_token = api.make_user("attorney")
    walled_admin, walled_token = api.make_user("admin")
    ok(
        admin.put(
            f"/cases/{case_id}/access",
            json={
                "access": "restricted",
                "grants": [],
                "walls": [{"subject_type": "user", "subject_id": walled_admin["id"]}],
            },
        )
    )
    ids = {
        "case_id": case_id,
        "document_id": document["id"],
        "note_id": note["id"],
        "task_id": task["id"],
        "party_id": party["id"],
        "deadline_id": saved["deadline_id"],
        "hold_id": hold["id"],
        "job_id": job_id,
        "invoice_id": invoice["id"],
        "entry_id": entry["id"],
        TRUST_ENTRY[1]: deposit["id"],
    }
    callers = {
        "outsider": (api.client(token=outsider_token), outsider["id"]),
        "walled_admin": (api.client(token=walled_token), walled_admin["id"]),
    }
    yield Hidden(ids, callers, admin)
    for client, _ in callers.values():
        client.close()
    admin.close()


# Path parameters that name no matter's thing: the same value in both calls.
OTHER_PARAMETERS = {
    "user_id": "user_01m8erwqxeyy7451bedsesqdnw",
    "line_id": "line_01m8erwqxeyy7451bedsesqdnw",
    "number": "1",  # a document's first version: it exists for every document
}


def _call(client: httpx.Client, method: str, template: str, ids: dict[str, str]) -> httpx.Response:
    named = {name: ids[name] for name in MATTER_PARAMETERS}
    if template.startswith(TRUST_ENTRY[0]):
        named["entry_id"] = ids[TRUST_ENTRY[1]]
    path = template.format(**OTHER_PARAMETERS, **named)
    if (method, template) in UPLOADS:
        return client.post(path, files={"file": ("memo.txt", b"A memo", "text/plain")})
    if method in ("POST", "PUT", "PATCH"):
        return client.request(method, path, json=BODIES[(method, template)])
    return client.request(method, path)


def test_a_walled_administrator_still_manages_the_wall(hidden: Hidden) -> None:
    client, user_id = hidden.callers["walled_admin"]
    settings = ok(client.get(f"/cases/{hidden.ids['case_id']}/access"))
    assert {"subject_type": "user", "subject_id": user_id} in [
        {k: w[k] for k in ("subject_type", "subject_id")} for w in settings["walls"]
    ]


def trail(admin: httpx.Client, **filters: str) -> list[dict[str, Any]]:
    """Every entry of the audit trail that matches `filters`, all pages."""
    entries: list[dict[str, Any]] = []
    cursor = None
    while True:
        params = {**filters, "limit": "100", **({"cursor": cursor} if cursor else {})}
        response = admin.get("/admin/audit", params=params)
        entries += ok(response)
        cursor = response.json()["meta"]["pagination"]["next_cursor"]
        if cursor is None:
            return entries


def _shape(response: httpx.Response) -> tuple[int, Any]:
    """What a caller can compare: the status, the body's keys, and the error's code and message."""
    if response.request.method == "HEAD" or not response.content:
        return response.status_code, None
    body = response.json()
    error = body.get("error")
    described = (
        (error.get("code"), error.get("message")) if isinstance(error, dict) else body.get("error_code")
    )
    return response.status_code, (sorted(body), described)


def test_every_matter_route_is_known(api: Api) -> None:
    routes = matter_routes(api)
    assert len(routes) >= 40
    unknown = [
        (method, path)
        for method, path in routes
        if method in ("POST", "PUT", "PATCH")
        and (method, path) not in BODIES
        and (method, path) not in UPLOADS
    ]
    assert unknown == [], "a new matter route: give it a body in BODIES"


@pytest.mark.parametrize("caller", ["outsider", "walled_admin"])
def test_a_hidden_thing_answers_as_a_missing_one_on_every_route(
    api: Api, hidden: Hidden, caller: str
) -> None:
    client, _ = hidden.callers[caller]
    missing = {name: new_id(prefix) for name, prefix in MATTER_PARAMETERS.items()}
    missing[TRUST_ENTRY[1]] = new_id(TRUST_ENTRY[2])
    differences = []
    for method, template in matter_routes(api, caller):
        seen = _shape(_call(client, method, template, hidden.ids))
        absent = _shape(_call(client, method, template, missing))
        if seen != absent:
            differences.append(f"{method} {template}: hidden {seen} != missing {absent}")
    assert differences == []


@pytest.mark.parametrize("caller", ["outsider", "walled_admin"])
def test_every_refusal_on_a_hidden_matter_is_recorded_as_denied(
    api: Api, hidden: Hidden, caller: str
) -> None:
    client, user_id = hidden.callers[caller]
    refused: dict[str, str] = {}  # request id -> route
    for method, template in matter_routes(api, caller):
        response = _call(client, method, template, hidden.ids)
        # A 403 decided before the matter is looked at (an administrator's route, to a user) is
        # about the caller's role, not the matter, and is answered the same for a missing one.
        if response.status_code == 404:
            refused[response.headers["x-request-id"]] = f"{method} {template}"
    assert len(refused) >= 40
    entries = trail(hidden.admin, case_id=hidden.ids["case_id"], actor_id=user_id)
    denied = {e["request_id"]: e for e in entries if e["outcome"] == "denied"}
    unrecorded = sorted(route for request_id, route in refused.items() if request_id not in denied)
    assert unrecorded == []
    for request_id in refused:
        entry = denied[request_id]
        assert entry["case_id"] == hidden.ids["case_id"] and entry["user_id"] == user_id
