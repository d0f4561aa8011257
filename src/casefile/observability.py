"""`GET /metrics` (contract §14, docs/operations.md#metrics): the process's Prometheus metrics, with
the gauges that describe the database (delivery and AI job queues, connection pool) read at scrape
time. With `CASEFILE_METRICS_TOKEN` set, the scraper must send it as a bearer token."""

from __future__ import annotations

import hmac
import logging
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy import func, select
from sqlalchemy.pool import QueuePool

from casefile.errors import invalid_token, no_credentials
from casefile.metrics import Metrics
from casefile.models import DELIVERY_STATUSES, JOB_STATUSES, AiJob, Delivery
from casefile.runtime import Runtime

log = logging.getLogger(__name__)

router = APIRouter()


def _authorize(request: Request, runtime: Runtime) -> None:
    token = runtime.settings.metrics_token
    if token is None:
        return
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    if not given:
        raise no_credentials()
    if scheme.lower() != "bearer" or not hmac.compare_digest(
        given.strip().encode(), token.get_secret_value().encode()
    ):
        raise invalid_token()


async def _read_database_gauges(runtime: Runtime, metrics: Metrics) -> None:
    """Queue depths by status. A scrape must not fail because the database does: the gauges keep
    their last values, and the error is logged."""
    try:
        async with runtime.db.transaction(write=False) as session:
            delivery_rows = await session.execute(
                select(Delivery.status, func.count()).group_by(Delivery.status)
            )
            deliveries: dict[str, int] = {status: count for status, count in delivery_rows}
            job_rows = await session.execute(select(AiJob.status, func.count()).group_by(AiJob.status))
            jobs: dict[str, int] = {status: count for status, count in job_rows}
    except Exception:
        log.warning("metrics: could not read the queues", exc_info=True)
        return
    for status in DELIVERY_STATUSES:
        metrics.deliveries.labels(status).set(deliveries.get(status, 0))
    for status in JOB_STATUSES:
        metrics.ai_jobs.labels(status).set(jobs.get(status, 0))


def _read_pool(runtime: Runtime, metrics: Metrics) -> None:
    engines: dict[int, Any] = {
        id(runtime.db.engine): runtime.db.engine,
        id(runtime.db.read_engine): runtime.db.read_engine,
    }
    checked_out = checked_in = size = 0
    for engine in engines.values():
        pool = engine.sync_engine.pool
        if isinstance(pool, QueuePool):
            checked_out += pool.checkedout()
            checked_in += pool.checkedin()
            size += pool.size()
    metrics.db_pool.labels("checked_out").set(checked_out)
    metrics.db_pool.labels("checked_in").set(checked_in)
    metrics.db_pool.labels("size").set(size)


@router.get("/metrics", include_in_schema=False)
async def metrics_endpoint(request: Request) -> Response:
    runtime: Runtime = request.app.state.runtime
    _authorize(request, runtime)
    metrics = runtime.metrics
    await _read_database_gauges(runtime, metrics)
    _read_pool(runtime, metrics)
    return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)
