"""Administration: webhooks (create, enable or disable, send a test, their deliveries, delete) and
the dead letters (deliveries that gave up) with "Retry", through `/admin/webhooks` and
`/admin/deliveries`' services. Deliveries of events about a matter the administrator is walled off
from are left out, and retrying one is a 404, as through the API. The signing secret is write-only:
a generated one is shown once."""

from __future__ import annotations

import secrets
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.auth.dependencies import AdminPrincipal
from casefile.auth.permissions import Principal
from casefile.error_handlers import validated
from casefile.events.catalogue import EVENT_NAMES
from casefile.listing import build_list_query
from casefile.models.webhooks import DELIVERY_STATUSES
from casefile.request_scope import RuntimeDep, SessionDep
from casefile.web.forms import lines, text
from casefile.web.security import AdminChanger
from casefile.web.signin import safe_next
from casefile.web.templating import render, viewer
from casefile.webhooks import service as webhooks_service
from casefile.webhooks.dependencies import DeliveryInPath
from casefile.webhooks.repository import DELIVERY_LIST, WEBHOOK_DELIVERY_LIST, WEBHOOK_LIST
from casefile.webhooks.schemas import TestDelivery, WebhookCreate, WebhookUpdate

router = APIRouter(include_in_schema=False)

RECENT_DELIVERIES = "50"


async def _list_page(
    request: Request, session: AsyncSession, principal: Principal, secret: dict[str, str] | None
) -> HTMLResponse:
    page = await webhooks_service.list_webhooks(
        session, build_list_query(WEBHOOK_LIST, {"limit": "100", "sort": "created_at", "order": "desc"})
    )
    context = {"webhooks": page.rows, "secret": secret, "section": "webhooks"}
    return render(request, "admin_webhooks.html", context, me=await viewer(session, principal), nav="admin")


@router.get("/app/admin/webhooks")
async def webhooks(request: Request, principal: AdminPrincipal, session: SessionDep) -> HTMLResponse:
    return await _list_page(request, session, principal, None)


@router.post("/app/admin/webhooks")
async def create_webhook(
    request: Request, principal: AdminChanger, session: SessionDep, runtime: RuntimeDep
) -> HTMLResponse:
    form = await request.form()
    given = text(form, "secret")
    values: dict[str, Any] = {
        "name": text(form, "name"),
        "url": text(form, "url"),
        "events": lines(text(form, "events")) or ["*"],
        # Left empty: a strong secret is made and shown once (the API needs one).
        "secret": given or secrets.token_urlsafe(32),
    }
    webhook = await webhooks_service.create_webhook(
        session, runtime, principal, validated(WebhookCreate, values)
    )
    shown = None if given else {"name": webhook.name, "secret": values["secret"]}
    return await _list_page(request, session, principal, shown)


@router.get("/app/admin/webhooks/{webhook_id}")
async def webhook_page(
    request: Request, webhook_id: str, principal: AdminPrincipal, session: SessionDep
) -> HTMLResponse:
    webhook = await webhooks_service.get_webhook(session, webhook_id)
    query = build_list_query(WEBHOOK_DELIVERY_LIST, {"limit": RECENT_DELIVERIES})
    deliveries = await webhooks_service.list_deliveries(session, principal, query, webhook=webhook)
    context = {
        "webhook": webhook,
        "deliveries": deliveries.rows,
        "event_names": EVENT_NAMES,
        "section": "webhooks",
    }
    return render(request, "admin_webhook.html", context, me=await viewer(session, principal), nav="admin")


@router.post("/app/admin/webhooks/{webhook_id}/test")
async def test_webhook(
    request: Request, webhook_id: str, principal: AdminChanger, session: SessionDep, runtime: RuntimeDep
) -> RedirectResponse:
    """One signed delivery now (`POST /webhooks/{id}/test`); its outcome is shown on the page."""
    webhook = await webhooks_service.get_webhook(session, webhook_id)
    body = validated(TestDelivery, {"event_type": text(await request.form(), "event_type")})
    _, attempt = await webhooks_service.send_test(session, runtime, webhook, body)
    outcome = {"test": "delivered" if attempt["success"] else "failed"}
    if attempt.get("status_code") is not None:
        outcome["code"] = str(attempt["status_code"])
    return RedirectResponse(f"/app/admin/webhooks/{webhook.id}?{urlencode(outcome)}", status_code=303)


@router.post("/app/admin/webhooks/{webhook_id}/active")
async def set_active(
    request: Request, webhook_id: str, principal: AdminChanger, session: SessionDep, runtime: RuntimeDep
) -> RedirectResponse:
    webhook = await webhooks_service.get_webhook(session, webhook_id)
    active = text(await request.form(), "active") == "true"
    await webhooks_service.update_webhook(session, runtime, webhook, WebhookUpdate(active=active))
    return RedirectResponse(f"/app/admin/webhooks/{webhook.id}?saved=1", status_code=303)


@router.post("/app/admin/webhooks/{webhook_id}/delete")
async def delete_webhook(webhook_id: str, principal: AdminChanger, session: SessionDep) -> RedirectResponse:
    webhook = await webhooks_service.get_webhook(session, webhook_id)
    await webhooks_service.delete_webhook(session, webhook)
    return RedirectResponse("/app/admin/webhooks?deleted=1", status_code=303)


@router.get("/app/admin/deliveries")
async def deliveries(request: Request, principal: AdminPrincipal, session: SessionDep) -> HTMLResponse:
    """The dead letters by default (`GET /deliveries?status=dead`); `status` picks another state."""
    status = request.query_params.get("status", "dead")
    status = status if status in DELIVERY_STATUSES else "dead"
    cursor = request.query_params.get("cursor", "")
    params = {"limit": "50", "status": status, **({"cursor": cursor} if cursor else {})}
    page = await webhooks_service.list_deliveries(session, principal, build_list_query(DELIVERY_LIST, params))
    more = {"status": status, "cursor": page.next_cursor} if page.next_cursor else None
    names = {
        w.id: w.name
        for w in (
            await webhooks_service.list_webhooks(session, build_list_query(WEBHOOK_LIST, {"limit": "100"}))
        ).rows
    }
    context = {
        "deliveries": page.rows,
        "status": status,
        "statuses": DELIVERY_STATUSES,
        "webhook_names": names,
        "next_url": "/app/admin/deliveries?" + urlencode(more) if more else "",
        "section": "deliveries",
    }
    return render(request, "admin_deliveries.html", context, me=await viewer(session, principal), nav="admin")


@router.post("/app/admin/deliveries/{delivery_id}/retry")
async def retry_delivery(
    request: Request,
    principal: AdminChanger,
    delivery: DeliveryInPath,
    session: SessionDep,
    runtime: RuntimeDep,
) -> RedirectResponse:
    await webhooks_service.retry_delivery(session, runtime, delivery)
    target = safe_next(text(await request.form(), "next") or "/app/admin/deliveries")
    return RedirectResponse(target + ("&" if "?" in target else "?") + "retried=1", status_code=303)
