"""create_app(): routers, middleware, error handlers and the process's runtime (lifespan)."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI
from fastapi.responses import JSONResponse
from starlette.middleware.cors import CORSMiddleware

from casefile import __version__, api_docs, envelope, error_handlers, openapi
from casefile.access.matter import CaseNotVisible
from casefile.admin import build_admin_router, log_entry_router
from casefile.ai.router import router as ai_router
from casefile.audit import denials
from casefile.audit.router import log_router as audit_log_router
from casefile.auth.dependencies import Require
from casefile.auth.permissions import Permission
from casefile.background import run_background_workers
from casefile.billing.invoice_router import router as invoices_router
from casefile.billing.router import router as billing_router
from casefile.bulk.router import router as bulk_router
from casefile.calendar_feed.router import router as calendar_router
from casefile.cases.router import router as cases_router
from casefile.conditional import ConditionalRequestsMiddleware
from casefile.conflicts.router import router as conflicts_router
from casefile.contacts.router import router as contacts_router
from casefile.customfields.router import router as custom_fields_router
from casefile.deadlines.router import router as deadlines_router
from casefile.deadlines.rulesets import shipped_rule_sets
from casefile.doctor import Readiness
from casefile.documents.router import router as documents_router
from casefile.documents.service import collect_orphaned_content
from casefile.errors import Forbidden, NotReady
from casefile.exports.router import router as exports_router
from casefile.holds.router import router as holds_router
from casefile.idempotency import IdempotencyMiddleware, Replayed, replay_response
from casefile.input_rules import refuse_nul_in_parameters
from casefile.metrics import Metrics, RequestMetricsMiddleware
from casefile.middleware import (
    AnsweredErrorsMiddleware,
    BodyLimitMiddleware,
    RequestIdMiddleware,
    TransportSecurityMiddleware,
)
from casefile.notes.router import router as notes_router
from casefile.observability import router as metrics_router
from casefile.query_parameters import QueryCheck
from casefile.ratelimit import RateLimitHeadersMiddleware
from casefile.routing import CURRENT_PREFIX, ApiAliasMiddleware
from casefile.runtime import Runtime
from casefile.search.router import router as search_router
from casefile.settings import Settings
from casefile.shedding import LoadSheddingMiddleware
from casefile.signin.router import router as signin_router
from casefile.startup import settle_garbage_collector, start_runtime
from casefile.tasks.router import router as tasks_router
from casefile.templates.router import cases_router as open_case_router
from casefile.templates.router import router as templates_router
from casefile.trust.router import router as trust_router
from casefile.users.router import router as users_router
from casefile.web import install as install_web_app
from casefile.webhooks.router import catalogue_router as webhook_catalogue_router

log = logging.getLogger("casefile")


def add_cors(app: FastAPI, settings: Settings) -> None:
    if settings.cors_origin_list:
        # Browsers of the listed origins only (docs/operations.md#cors). Credentials are tokens in
        # headers, never cookies, so no `allow_credentials`. A preflight is answered here, before
        # the routes (which answer OPTIONS with 405).
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origin_list,
            allow_methods=["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"],
            allow_headers=[
                "Authorization",
                "X-API-Key",
                "Content-Type",
                "X-Request-ID",
                "If-None-Match",
                "If-Match",
                "Range",
            ],
            expose_headers=[
                "X-Request-ID",
                "X-Client-Request-ID",
                "X-RateLimit-Limit",
                "X-RateLimit-Remaining",
                "X-RateLimit-Reset",
                "Retry-After",
                "ETag",
                "Content-Disposition",
                "Content-Range",
            ],
            max_age=600,
        )


def include_api(app: FastAPI) -> None:
    """Every domain's routes under `/api/v1`, each router included directly in the application:
    FastAPI matches included routers level by level, walking each level's routes on every
    request, so one level less is measurably cheaper (docs/research/bench-notes-2026-11.md, "The hot
    path")."""
    # Every query and path parameter meets the one string rule (casefile.input_rules), before
    # any other dependency reads them.
    nul_rule = Depends(refuse_nul_in_parameters)
    # Undeclared or repeated query parameters are refused on every route (query_parameters.py);
    # the admin area attaches the check itself, after its administrator check.
    # FastAPI tries routes in order, each with a few regular-expression matches: the most used
    # first (no two routers' paths overlap, so the order decides nothing else).
    routers = (
        bulk_router,
        cases_router,
        open_case_router,
        documents_router,
        search_router,
        ai_router,
        signin_router,
        users_router,
        holds_router,
        contacts_router,
        conflicts_router,
        notes_router,
        webhook_catalogue_router,
        exports_router,
    )
    practice = (
        tasks_router,
        deadlines_router,
        calendar_router,
        billing_router,
        invoices_router,
        trust_router,
        custom_fields_router,
        templates_router,
    )
    for router in (*routers, *practice):
        app.include_router(router, prefix=CURRENT_PREFIX, dependencies=[nul_rule, QueryCheck])
    app.include_router(build_admin_router(), prefix=CURRENT_PREFIX, dependencies=[nul_rule])
    # The audit log's heads and proofs: administrators, and API keys holding `read:audit`.
    audit_reader = Depends(Require(Permission.READ_AUDIT))
    for log_router in (audit_log_router, log_entry_router):
        app.include_router(
            log_router, prefix=CURRENT_PREFIX, dependencies=[nul_rule, audit_reader, QueryCheck]
        )


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    metrics = Metrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Deadline rule sets are data files: read and validated once, now, so a broken one stops
        # the start instead of failing a computation later.
        shipped_rule_sets()
        runtime = start_runtime(settings, metrics)
        if settings.webhook_allow_private_urls:
            log.warning(
                "DEVELOPMENT SETTING ON: CASEFILE_WEBHOOK_ALLOW_PRIVATE_URLS=true lets webhooks reach "
                "http:// and internal addresses (loopback, private networks, cloud metadata); "
                "never use it in production"
            )
        app.state.runtime = runtime
        collected = await collect_orphaned_content(runtime)
        if collected:
            log.info("collected %d stored files no document refers to", collected)
        stop = asyncio.Event()
        workers = (
            [asyncio.create_task(run_background_workers(runtime, stop))] if settings.worker_enabled else []
        )
        settle_garbage_collector()
        try:
            yield
        finally:
            gc.unfreeze()  # a stopped app's objects may be collected (tests run many per process)
            stop.set()
            await asyncio.gather(*workers)
            await runtime.close()

    app = FastAPI(
        title="Casefile",
        version=__version__,
        summary="Legal case management: cases, documents, users, API keys and signed webhooks.",
        lifespan=lifespan,
        # Served by api_docs from an installed package, not from a CDN.
        docs_url=None,
        redoc_url=None,
    )
    error_handlers.install(app)
    # Refusals that concern a case leave a `denied` entry in the audit trail, then answer as usual.
    app.add_exception_handler(CaseNotVisible, denials.on_case_not_visible)
    app.add_exception_handler(Forbidden, denials.on_forbidden)
    app.add_exception_handler(Replayed, replay_response)
    # Added last = outermost: the request id is set before anything else runs. The idempotency
    # layer is innermost: what it stores is the handler's answer, without the outer layers' headers.
    app.add_middleware(ConditionalRequestsMiddleware)
    app.add_middleware(IdempotencyMiddleware)
    app.add_middleware(RateLimitHeadersMiddleware)
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_json_body_bytes)
    app.add_middleware(TransportSecurityMiddleware, require_https=settings.require_https)
    add_cors(app, settings)
    # Inside the metrics (a refusal is counted and logged like any answer), outside everything
    # that costs work: a request turned away is answered before its body is read.
    app.add_middleware(
        LoadSheddingMiddleware,
        metrics=metrics,
        max_concurrent=settings.max_concurrent_requests,
        max_queued=settings.max_queued_requests,
        max_wait=settings.max_queue_wait_seconds,
        retry_after=settings.overload_retry_after_seconds,
    )
    app.add_middleware(RequestMetricsMiddleware, metrics=metrics)
    app.add_middleware(RequestIdMiddleware)
    # The unversioned prefix is an alias of the current version (docs/api-conventions.md#versioning).
    app.add_middleware(ApiAliasMiddleware)
    AnsweredErrorsMiddleware.wrap(app)

    # Health checks first: load balancers call them often, and FastAPI tries routes in order.
    @app.get("/healthz", tags=["health"], dependencies=[QueryCheck])
    async def healthz() -> JSONResponse:
        """The process is alive."""
        return envelope.ok({"status": "ok", "version": __version__})

    readiness = Readiness()

    @app.get(
        "/readyz",
        tags=["health"],
        dependencies=[QueryCheck],
        responses={
            503: {
                "description": "Not ready (`NOT_READY`): the database does not answer or its schema is "
                "older than this release, Redis (when configured) does not answer, or the content store "
                "is not writable; the message says which"
            }
        },
    )
    async def readyz() -> JSONResponse:
        """Ready to serve: the checks of `casefile doctor` that are cheap enough to poll."""
        runtime: Runtime = app.state.runtime
        problems = await readiness.problems(runtime)
        if problems:
            raise NotReady("Not ready: " + "; ".join(problems))
        return envelope.ok({"status": "ready"})

    include_api(app)
    _install_documents_and_pages(app)
    return app


def _install_documents_and_pages(app: FastAPI) -> None:
    """`/metrics`, the API's documentation and OpenAPI document, then the web app's pages
    (docs/web-app.md): last, because its error pages wrap the handlers installed before it."""
    app.include_router(metrics_router)
    api_docs.install(app)
    openapi.install(app)
    install_web_app(app)
