"""The `/admin` area: every route in it needs an administrator's access token (API keys never
qualify, docs/api-conventions.md#permissions). The check runs for unknown `/admin` paths too, so that only
administrators learn which admin endpoints exist; an administrator gets 404 for an unknown one."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from casefile.api_keys.router import router as api_keys_router
from casefile.auth.dependencies import require_admin
from casefile.config.router import router as config_router
from casefile.errors import NotFound
from casefile.query_parameters import QueryCheck
from casefile.webhooks.router import router as webhooks_router

ALL_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]


def build_admin_router() -> APIRouter:
    router = APIRouter(prefix="/admin", dependencies=[Depends(require_admin)])
    # The query-string check runs after the administrator check: others learn nothing here.
    for domain_router in (api_keys_router, webhooks_router, config_router):
        router.include_router(domain_router, dependencies=[QueryCheck])

    # Last, so that it only catches what no admin route matched.
    @router.api_route("/{path:path}", methods=ALL_METHODS, include_in_schema=False)
    async def unknown_admin_route(path: str) -> None:
        raise NotFound("No such endpoint")

    return router
