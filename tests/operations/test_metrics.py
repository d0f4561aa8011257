"""`GET /metrics` (docs/operations.md#metrics): Prometheus text, by route template, with the queues
and the pool; a bearer token when `CASEFILE_METRICS_TOKEN` is set."""

from __future__ import annotations

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.support import plain
from tests.support.assertions import auth_error, ok
from tests.support.factories import new_case
from tests.support.receivers import Receiver
from tests.support.servers import Api
from tests.support.waiting import wait_until, well_inside_a_minute


def scrape(api: Api, **kw) -> dict[str, list]:
    r = plain.get(api.root + "/metrics", **kw)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/plain")
    return {family.name: family.samples for family in text_string_to_metric_families(r.text)}


def value(samples: list, name: str, **labels: str) -> float:
    return sum(
        s.value for s in samples if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
    )


def test_requests_are_counted_by_route_template(api: Api, admin: httpx.Client) -> None:
    case = new_case(admin)
    before = scrape(api)
    for _ in range(3):
        ok(admin.get(f"/cases/{case['id']}"))
    admin.get("/cases/case_does_not_exist")
    admin.get("/no/such/path/at/all")
    after = scrape(api)
    name, route = "casefile_http_requests_total", "/api/v1/cases/{case_id}"
    requests = after["casefile_http_requests"]
    assert (
        value(requests, name, route=route, status="200")
        - value(before["casefile_http_requests"], name, route=route, status="200")
        == 3
    )
    assert value(requests, name, route=route, status="404") >= 1
    assert value(requests, name, route="<unmatched>", status="404") >= 1
    # No series names a raw id or an unknown path.
    assert not any(case["id"] in str(s.labels) or "no/such" in str(s.labels) for s in requests)
    latency = after["casefile_http_request_duration_seconds"]
    assert value(latency, "casefile_http_request_duration_seconds_count", route=route) >= 3
    pool = after["casefile_db_pool_connections"]
    assert {s.labels["state"] for s in pool} == {"checked_out", "checked_in", "size"}


def test_queues_and_delivery_outcomes(
    api: Api, admin: httpx.Client, hooks: list[str], receiver: Receiver
) -> None:
    hook = ok(
        admin.post(
            "/admin/webhooks",
            json={"name": "m", "url": receiver.url, "events": ["case.created"], "secret": "s" * 32},
        ),
        201,
    )
    hooks.append(hook["id"])
    # Successes only: other tests' webhooks (and `*` subscribers of `audit.tree_head`) may have
    # failed attempts on this server already.
    before = value(
        scrape(api)["casefile_webhook_delivery_attempts"],
        "casefile_webhook_delivery_attempts_total",
        outcome="success",
    )
    new_case(admin)
    receiver.wait_for(event="case.created")
    wait_until(
        lambda: (
            value(
                scrape(api)["casefile_webhook_delivery_attempts"],
                "casefile_webhook_delivery_attempts_total",
                outcome="success",
            )
            > before
        )
    )
    families = scrape(api)
    statuses = {s.labels["status"] for s in families["casefile_webhook_deliveries"]}
    assert statuses == {"pending", "retrying", "succeeded", "dead"}
    assert (
        value(families["casefile_webhook_deliveries"], "casefile_webhook_deliveries", status="succeeded") >= 1
    )
    assert {s.labels["status"] for s in families["casefile_ai_jobs"]} >= {"pending", "running"}


def test_rate_limit_rejections_are_counted(make_server) -> None:
    api = make_server(rate_limit_login="2/minute")
    well_inside_a_minute()
    for _ in range(3):
        plain.post(api.base + "/auth/login", json={"email": "x@example.com", "password": "wrong-password-1"})
    samples = scrape(api)["casefile_rate_limit_rejections"]
    assert value(samples, "casefile_rate_limit_rejections_total", bucket="login") == 1


def test_metrics_token(make_server) -> None:
    api = make_server(metrics_token="scrape-secret-123")
    auth_error(plain.get(api.root + "/metrics"), 401, "AUTH_002")
    auth_error(plain.get(api.root + "/metrics", headers={"Authorization": "Bearer nope"}), 401, "AUTH_001")
    assert "casefile_http_requests" in scrape(api, headers={"Authorization": "Bearer scrape-secret-123"})
