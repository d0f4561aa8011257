"""What the billing tests share: a case with its client and a rate for the admin."""

from __future__ import annotations

from typing import Any

import httpx

from tests.support.assertions import ok
from tests.support.factories import new_case, unique


def billed_case(admin: httpx.Client, rate: str = "300.00") -> dict[str, Any]:
    """A case whose client is a new contact, and the admin's rate on it."""
    client = ok(admin.post("/contacts", json={"kind": "organization", "name": unique("Client ")}), 201)
    case = new_case(admin, client_name=None)
    ok(admin.post(f"/cases/{case['id']}/parties", json={"contact_id": client["id"], "role": "client"}), 201)
    me = ok(admin.get("/users/me"))
    ok(admin.put("/billing/rates", json={"user_id": me["id"], "amount": rate, "case_id": case["id"]}))
    return {**case, "client": client, "me": me}
