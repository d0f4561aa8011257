"""Deliveries carry the Standard Webhooks headers (contract §14), checked with that specification's
own library (`standardwebhooks`), which a receiver gives `base64(secret)`."""

from __future__ import annotations

import base64

import httpx
import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from tests.support.assertions import ok
from tests.support.factories import new_case, unique
from tests.support.receivers import Receiver


def standard(secret: str) -> Webhook:
    return Webhook(base64.b64encode(secret.encode()).decode())


def test_delivery_verifies_with_the_standard_webhooks_library(
    admin: httpx.Client, hooks: list[str], receiver: Receiver
) -> None:
    secret = "whsec_" + unique("std") * 2
    hook = ok(
        admin.post(
            "/admin/webhooks",
            json={"name": "std", "url": receiver.url, "events": ["case.created"], "secret": secret},
        ),
        201,
    )
    hooks.append(hook["id"])
    new_case(admin)
    got = receiver.wait_for(event="case.created")[0]
    payload = standard(secret).verify(got.body, dict(got.headers))
    assert got.headers["webhook-id"] == payload["id"] == got.json()["id"]
    assert got.headers["webhook-timestamp"] == got.headers["x-service-timestamp"]
    with pytest.raises(WebhookVerificationError):
        standard("whsec_not-the-secret-0123456789").verify(got.body, dict(got.headers))
    with pytest.raises(WebhookVerificationError):
        standard(secret).verify(got.body + b" ", dict(got.headers))


def test_both_secrets_sign_during_a_rotation(
    admin: httpx.Client, hooks: list[str], receiver: Receiver
) -> None:
    old = "whsec_" + unique("old") * 2
    hook = ok(
        admin.post(
            "/admin/webhooks",
            json={"name": "std-rot", "url": receiver.url, "events": ["case.created"], "secret": old},
        ),
        201,
    )
    hooks.append(hook["id"])
    new = ok(admin.post(f"/admin/webhooks/{hook['id']}/rotate-secret", json={}))["secret"]
    new_case(admin)
    got = receiver.wait_for(event="case.created")[0]
    assert len(got.headers["webhook-signature"].split(" ")) == 2
    assert standard(old).verify(got.body, dict(got.headers))["id"] == got.headers["webhook-id"]
    assert standard(new).verify(got.body, dict(got.headers))["id"] == got.headers["webhook-id"]


def test_test_deliveries_carry_the_headers_too(
    admin: httpx.Client, hooks: list[str], receiver: Receiver
) -> None:
    secret = "whsec_" + unique("tst") * 2
    hook = ok(
        admin.post(
            "/admin/webhooks",
            json={"name": "std-test", "url": receiver.url, "events": ["case.created"], "secret": secret},
        ),
        201,
    )
    hooks.append(hook["id"])
    ok(admin.post(f"/admin/webhooks/{hook['id']}/test", json={"event_type": "case.created"}))
    got = receiver.wait_for(event="case.created")[0]
    assert standard(secret).verify(got.body, dict(got.headers))["metadata"]["test"] is True
