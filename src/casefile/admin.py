"""The `/admin` area: every route in it needs an administrator's access token (API keys never
qualify, docs/api-conventions.md#permissions). The check runs for unknown `/admin` paths and wrong
methods too, so that only administrators learn which admin endpoints exist; an administrator gets
404 for an unknown one and 405 for a wrong method (`routing.py`)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request

from casefile.ai.router import admin_router as ai_admin_router
from casefile.api_keys.router import router as api_keys_router
from casefile.audit.router import router as audit_router
from casefile.auth.dependencies import require_admin
from casefile.config.router import router as config_router
from casefile.customfields.router import admin_router as custom_fields_admin_router
from casefile.groups.router import router as groups_router
from casefile.query_parameters import QueryCheck
from casefile.routing import AnyMethodRoute, unrouted_error
from casefile.templates.router import admin_router as templates_admin_router
from casefile.trash.router import router as trash_router
from casefile.webhooks.router import router as webhooks_router


def build_admin_router() -> APIRouter:
    router = APIRouter(prefix="/admin", dependencies=[Depends(require_admin)])
    # The query-string check runs after the administrator check: others learn nothing here.
    domain_routers = (
        api_keys_router,
        webhooks_router,
        config_router,
        groups_router,
        audit_router,
        trash_router,
        ai_admin_router,
        custom_fields_admin_router,
        templates_admin_router,
    )
    for domain_router in domain_routers:
        router.include_router(domain_router, dependencies=[QueryCheck])

    # Last, so that it only takes what no admin route took: an unknown path, or a wrong method
    # (it takes every method, so a wrong one is answered here, after the administrator check).
    async def unrouted_admin_request(request: Request) -> None:
        raise unrouted_error(request)

    router.add_api_route(
        "/{path:path}",
        unrouted_admin_request,
        include_in_schema=False,
        route_class_override=AnyMethodRoute,
    )

    return router
