from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from casefile import envelope
from casefile.auth.dependencies import AdminPrincipal, CurrentPrincipal
from casefile.envelope import DeletedOut, Envelope, PageEnvelope
from casefile.events.event_types import event_types
from casefile.listing import ListQuery, list_query
from casefile.request_scope import RuntimeDep, SessionDep
from casefile.webhooks import recovery, service
from casefile.webhooks.dependencies import DeliveryInPath, WebhookInPath
from casefile.webhooks.repository import DELIVERY_LIST, WEBHOOK_DELIVERY_LIST, WEBHOOK_LIST
from casefile.webhooks.schemas import (
    DeliveryDetail,
    DeliveryOut,
    EventTypeOut,
    RecoverDeliveries,
    RecoveryOut,
    RotateSecret,
    TestDelivery,
    TestOutcome,
    WebhookCreate,
    WebhookOut,
    WebhookUpdate,
)

# Mounted under /admin, whose router already demands an administrator's access token.
router = APIRouter(tags=["webhooks"])

WebhookListQuery = Annotated[ListQuery, Depends(list_query(WEBHOOK_LIST))]
DeliveryListQuery = Annotated[ListQuery, Depends(list_query(DELIVERY_LIST))]
WebhookDeliveryListQuery = Annotated[ListQuery, Depends(list_query(WEBHOOK_DELIVERY_LIST))]

# A handler with a body or a query string loads its path's row itself: see auth.dependencies.


@router.post("/webhooks", response_model=Envelope[WebhookOut], status_code=201)
async def create_webhook(
    body: WebhookCreate, admin: AdminPrincipal, session: SessionDep, runtime: RuntimeDep
) -> JSONResponse:
    """Register a webhook. The `secret` signs deliveries and is never returned."""
    return envelope.created(WebhookOut.dump(await service.create_webhook(session, runtime, admin, body)))


@router.get("/webhooks", response_model=PageEnvelope[WebhookOut])
async def list_webhooks(session: SessionDep, query: WebhookListQuery) -> JSONResponse:
    return envelope.listed(await service.list_webhooks(session, query), query, WebhookOut.dump)


@router.get("/webhooks/{webhook_id}", response_model=Envelope[WebhookOut])
async def get_webhook(webhook: WebhookInPath) -> JSONResponse:
    return envelope.ok(WebhookOut.dump(webhook))


@router.put("/webhooks/{webhook_id}", response_model=Envelope[WebhookOut])
@router.patch("/webhooks/{webhook_id}", response_model=Envelope[WebhookOut])
async def update_webhook(
    webhook_id: str, body: WebhookUpdate, session: SessionDep, runtime: RuntimeDep
) -> JSONResponse:
    """Change any subset of name, url, events, active, retry_policy, secret (immediately; see
    rotate-secret for a graceful change)."""
    webhook = await service.get_webhook(session, webhook_id)
    return envelope.ok(WebhookOut.dump(await service.update_webhook(session, runtime, webhook, body)))


@router.delete("/webhooks/{webhook_id}", response_model=Envelope[DeletedOut])
async def delete_webhook(webhook: WebhookInPath, session: SessionDep) -> JSONResponse:
    """Delete the webhook and its deliveries."""
    await service.delete_webhook(session, webhook)
    return envelope.deleted(webhook.id)


@router.post("/webhooks/{webhook_id}/rotate-secret", response_model=Envelope[WebhookOut])
async def rotate_secret(
    webhook_id: str, body: RotateSecret, session: SessionDep, runtime: RuntimeDep
) -> JSONResponse:
    """Replace the secret. For `grace_period_seconds` (default 24 h) deliveries carry a `v1=`
    signature for the old secret too. A generated secret is returned once, as `secret`."""
    webhook = await service.get_webhook(session, webhook_id)
    webhook, generated = await service.rotate_secret(session, runtime, webhook, body)
    data = WebhookOut.dump(webhook)
    if generated is not None:
        data["secret"] = generated
    return envelope.ok(data)


@router.post("/webhooks/{webhook_id}/test", response_model=Envelope[TestOutcome])
async def test_webhook(
    webhook_id: str, body: TestDelivery, session: SessionDep, runtime: RuntimeDep
) -> JSONResponse:
    """Send one signed delivery of `event_type` with `test_data` now (`metadata.test: true`)."""
    webhook = await service.get_webhook(session, webhook_id)
    delivery, attempt = await service.send_test(session, runtime, webhook, body)
    return envelope.ok({"delivery": delivery, "attempt": attempt})


@router.post("/webhooks/{webhook_id}/recover", response_model=Envelope[RecoveryOut], status_code=202)
async def recover_deliveries(
    webhook_id: str, body: RecoverDeliveries, admin: AdminPrincipal, session: SessionDep, runtime: RuntimeDep
) -> JSONResponse:
    """Re-queue every failed or dead delivery of this webhook made in `[since, until)` (after an
    outage), as a job: 202 with its progress, read again at its `Location`."""
    webhook = await service.get_webhook(session, webhook_id)
    started = await recovery.start_recovery(session, runtime, admin, webhook, body)
    return envelope.accepted(recovery.recovery_out(started))


@router.get("/webhook-recoveries/{recovery_id}", response_model=Envelope[RecoveryOut])
async def get_recovery(recovery_id: str, session: SessionDep) -> JSONResponse:
    return envelope.ok(recovery.recovery_out(await recovery.get_recovery(session, recovery_id)))


@router.get("/webhooks/{webhook_id}/deliveries", response_model=PageEnvelope[DeliveryOut])
async def webhook_deliveries(
    webhook_id: str, admin: AdminPrincipal, session: SessionDep, query: WebhookDeliveryListQuery
) -> JSONResponse:
    """The webhook's deliveries (those of events about a matter the caller is walled off from
    left out)."""
    webhook = await service.get_webhook(session, webhook_id)
    deliveries = await service.list_deliveries(session, admin, query, webhook=webhook)
    return envelope.listed(deliveries, query, service.delivery_out)


@router.get("/deliveries", response_model=PageEnvelope[DeliveryOut])
async def list_deliveries(
    admin: AdminPrincipal, session: SessionDep, query: DeliveryListQuery
) -> JSONResponse:
    """Every delivery; `status=dead` is the dead-letter queue. Deliveries of events about a matter
    the caller is walled off from are left out (docs/api-conventions.md#administrators-behind-walls)."""
    return envelope.listed(await service.list_deliveries(session, admin, query), query, service.delivery_out)


@router.get("/deliveries/{delivery_id}", response_model=Envelope[DeliveryDetail])
async def get_delivery(delivery: DeliveryInPath) -> JSONResponse:
    """A delivery with its event data and every attempt (number, time, status code, duration,
    error, first 1 KiB of the response)."""
    return envelope.ok(service.delivery_detail(delivery))


@router.post("/deliveries/{delivery_id}/retry", response_model=Envelope[DeliveryOut])
async def retry_delivery(delivery: DeliveryInPath, session: SessionDep, runtime: RuntimeDep) -> JSONResponse:
    """Send a dead or waiting delivery again now, with a fresh attempt budget."""
    return envelope.ok(service.delivery_out(await service.retry_delivery(session, runtime, delivery)))


# Outside /admin: any authenticated caller may read the catalogue, to write a receiver.
catalogue_router = APIRouter(tags=["webhooks"])


@catalogue_router.get("/webhook-event-types", response_model=Envelope[list[EventTypeOut]])
async def list_event_types(_caller: CurrentPrincipal) -> JSONResponse:
    """Every event a webhook can subscribe to, with its description and the JSON Schema of its
    `data`, generated from the types its payload is built with."""
    return envelope.ok(event_types())
