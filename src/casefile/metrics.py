"""The process's Prometheus metrics (docs/operations.md#metrics), and the middleware that records
every request in them and writes its one log line.

Each application has a registry of its own (not prometheus_client's global one), so that several
applications in one process (the tests) do not collide. Requests are labelled by route template
(`/api/v1/cases/{case_id}`), never by raw path: ids in paths would make a series per case. Gauges
that describe the database (queue depths, pool use) are read when `/metrics` is scraped.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics
from starlette.types import Message, Receive, Scope, Send

from casefile.middleware import HttpMiddleware

log = logging.getLogger("casefile.access")

# No `*_created` series beside every counter and histogram: Prometheus does not need them, and
# they would double what a scrape carries.
disable_created_metrics()  # type: ignore[no-untyped-call]

UNMATCHED_ROUTE = "<unmatched>"  # one label for every path no route has (scanners, typos)
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
JOB_BUCKETS = (0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.requests = Counter(
            "casefile_http_requests", "HTTP requests answered", ["method", "route", "status"], registry=r
        )
        self.latency = Histogram(
            "casefile_http_request_duration_seconds",
            "Time to answer a request (until the response starts streaming)",
            ["method", "route"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.in_progress = Gauge("casefile_http_requests_in_progress", "Requests being answered", registry=r)
        self.rate_limited = Counter(
            "casefile_rate_limit_rejections", "Requests refused with 429, by bucket", ["bucket"], registry=r
        )
        self.delivery_attempts = Counter(
            "casefile_webhook_delivery_attempts",
            "Webhook delivery attempts made by this process, by outcome (success, failure)",
            ["outcome"],
            registry=r,
        )
        self.broken_deliveries = Counter(
            "casefile_webhook_broken_deliveries",
            "Delivery attempts failed before sending because the stored row could not be used, by reason "
            "(secret: the webhook's secret cannot be decrypted; row: other stored data is broken)",
            ["reason"],
            registry=r,
        )
        self.delivery_duration = Histogram(
            "casefile_webhook_delivery_attempt_duration_seconds",
            "Duration of one delivery attempt",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.deliveries = Gauge(
            "casefile_webhook_deliveries",
            "Deliveries in the database, by status (pending + retrying = the queue; dead = dead letters)",
            ["status"],
            registry=r,
        )
        self.ai_jobs = Gauge(
            "casefile_ai_jobs",
            "AI jobs in the database, by status (pending = the queue)",
            ["status"],
            registry=r,
        )
        self.ai_job_duration = Histogram(
            "casefile_ai_job_duration_seconds",
            "Duration of AI jobs run by this process, by kind and outcome",
            ["kind", "outcome"],
            buckets=JOB_BUCKETS,
            registry=r,
        )
        self.db_pool = Gauge(
            "casefile_db_pool_connections",
            "Database connections of this process: in use (checked_out), idle (checked_in), pool size",
            ["state"],
            registry=r,
        )
        self.errors = Counter(
            "casefile_unhandled_errors", "Requests that ended in an unexpected error (500)", registry=r
        )


def route_template(scope: Scope) -> str:
    """The matched route's path template with the prefixes of the routers it is in
    (`/api/v1/cases/{case_id}`), or one fixed label when no route matched."""
    # FastAPI keeps the route as included (prefix and all) here; `scope["route"]` is the route as
    # declared in its router, without the prefix.
    effective = scope.get("fastapi", {}).get("effective_route_context")
    for candidate in (effective, scope.get("route")):
        path = getattr(candidate, "path_format", None) or getattr(candidate, "path", None)
        if isinstance(path, str) and path:
            return path
    return UNMATCHED_ROUTE


class RequestMetricsMiddleware(HttpMiddleware):
    """Count and time every request, by route template and status, and write one log line for it:
    request id, method, route template, status, duration, principal (docs/operations.md#logs).

    It runs inside the request-id middleware and outside the routing, so it sees the route the
    router chose (`scope["route"]`) once the handler has run, and an unhandled error as an
    exception (answered 500 further out)."""

    def __init__(self, app: Any, metrics: Metrics) -> None:
        super().__init__(app)
        self.metrics = metrics

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.perf_counter()
        status = 500
        elapsed: float | None = None

        async def observe(message: Message) -> None:
            nonlocal status, elapsed
            if message["type"] == "http.response.start":
                status = message["status"]
                elapsed = time.perf_counter() - started
            await send(message)

        self.metrics.in_progress.inc()
        try:
            await self.app(scope, receive, observe)
        except Exception:
            status = 500
            raise
        finally:
            self.metrics.in_progress.dec()
            duration = elapsed if elapsed is not None else time.perf_counter() - started
            self._record(scope, status, duration)

    def _record(self, scope: Scope, status: int, duration: float) -> None:
        route = route_template(scope)
        method = scope["method"]
        self.metrics.requests.labels(method, route, str(status)).inc()
        self.metrics.latency.labels(method, route).observe(duration)
        state = scope.get("state", {})
        verdict = state.get("rate_limit")
        if status == 429 and verdict is not None and not getattr(verdict, "allowed", True):
            self.metrics.rate_limited.labels(getattr(verdict, "bucket", "unknown")).inc()
        if status >= 500:
            self.metrics.errors.inc()
        log.info(
            "%s %s %d %.1fms",
            method,
            route,
            status,
            duration * 1000,
            extra={
                "request_id": state.get("request_id"),
                "client_request_id": state.get("client_request_id"),
                "method": method,
                "route": route,
                "status": status,
                "duration_ms": round(duration * 1000, 1),
                "principal_id": state.get("principal_id"),
            },
        )
