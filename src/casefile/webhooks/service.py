"""Webhook registrations, test deliveries, secret rotation, and the delivery log (with the
dead-letter queue and its replay)."""

from __future__ import annotations

import secrets
from datetime import timedelta
from typing import Any

from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from casefile.access.matter import outside_walls
from casefile.audit import service as audit
from casefile.auth.permissions import Principal
from casefile.clock import utcnow
from casefile.config.schemas import RetryPolicy
from casefile.config.service import load as load_config
from casefile.db import commit_early, get_or_404
from casefile.error_handlers import validation_details
from casefile.errors import Conflict, ErrorDetail, ValidationFailed
from casefile.events.outbox import announce_deliveries
from casefile.listing import ListQuery, Page, fetch_page
from casefile.models import Delivery, Event, Webhook
from casefile.runtime import Runtime
from casefile.webhooks.claims import claim_due
from casefile.webhooks.delivery import attempt, count_attempt, delivery_client
from casefile.webhooks.recording import record_outcome
from casefile.webhooks.repository import DELIVERY_LIST, WEBHOOK_LIST
from casefile.webhooks.schemas import (
    AttemptOut,
    DeliveryDetail,
    DeliveryOut,
    RotateSecret,
    TestDelivery,
    WebhookCreate,
    WebhookUpdate,
)
from casefile.webhooks.ssrf import check_url


def delivery_out(delivery: Delivery) -> dict[str, Any]:
    return DeliveryOut(
        id=delivery.id,
        webhook_id=delivery.webhook_id,
        event=delivery.event.name,
        event_id=delivery.event.payload_id,
        status=delivery.status,
        attempt_count=delivery.attempts_made,
        max_attempts=delivery.max_attempts,
        next_attempt_at=delivery.next_attempt_at if delivery.status in ("pending", "retrying") else None,
        last_status_code=delivery.last_status_code,
        last_error=delivery.last_error,
        created_at=delivery.created_at,
        updated_at=delivery.updated_at,
        succeeded_at=delivery.succeeded_at,
    ).model_dump(mode="json")


def delivery_detail(delivery: Delivery) -> dict[str, Any]:
    return DeliveryDetail(
        **delivery_out(delivery),
        data=delivery.event.data,
        test=delivery.event.is_test,
        attempts=[AttemptOut.model_validate(a) for a in delivery.attempts],
    ).model_dump(mode="json")


async def _validated_url(runtime: Runtime, url: str) -> str:
    await check_url(url, allow_private=runtime.settings.webhook_allow_private_urls)
    return url


async def create_webhook(
    session: AsyncSession, runtime: Runtime, actor: Principal, body: WebhookCreate
) -> Webhook:
    now = utcnow()
    config = await load_config(session, runtime.settings)
    webhook = Webhook(
        name=body.name,
        url=await _validated_url(runtime, body.url),
        events=body.events,
        active=body.active,
        retry_policy=(body.retry_policy or config.webhooks.default_retry_policy).model_dump(),
        secret_sealed=runtime.secret_box.seal(body.secret),
        previous_secrets=[],
        case_ids=body.case_ids,
        case_types=body.case_types,
        created_by=actor.actor_id,
        created_at=now,
        updated_at=now,
    )
    session.add(webhook)
    await session.flush()
    audit.record(
        session, "webhook.created", resource_type="webhook", resource_id=webhook.id, details=_audited(webhook)
    )
    return webhook


def _audited(webhook: Webhook) -> dict[str, Any]:
    """What the trail keeps of a registration (never its secrets)."""
    return {"name": webhook.name, "url": webhook.url, "events": webhook.events, "active": webhook.active}


async def get_webhook(session: AsyncSession, webhook_id: str) -> Webhook:
    return await get_or_404(session, Webhook, webhook_id, "Webhook not found")


async def get_delivery(session: AsyncSession, delivery_id: str) -> Delivery:
    """With its attempts, which are never loaded lazily."""
    return await get_or_404(
        session, Delivery, delivery_id, "Delivery not found", selectinload(Delivery.attempts)
    )


async def list_webhooks(session: AsyncSession, query: ListQuery) -> Page[Webhook]:
    return await fetch_page(session, WEBHOOK_LIST, query)


async def update_webhook(
    session: AsyncSession, runtime: Runtime, webhook: Webhook, body: WebhookUpdate
) -> Webhook:
    values = body.model_dump(exclude_unset=True)
    nullable = ("case_ids", "case_types")  # null: no filter
    nulls = [
        ErrorDetail(name, f"{name} cannot be null")
        for name, value in values.items()
        if value is None and name not in nullable
    ]
    if nulls:
        raise ValidationFailed(details=nulls)
    if "retry_policy" in values:
        try:
            merged = RetryPolicy.model_validate({**webhook.retry_policy, **values["retry_policy"]})
        except ValidationError as exc:
            details = [
                ErrorDetail(f"retry_policy.{d.field}", d.message) for d in validation_details(exc.errors())
            ]
            raise ValidationFailed(details=details) from exc
        webhook.retry_policy = merged.model_dump()
    if "url" in values:
        webhook.url = await _validated_url(runtime, values["url"])
    if "secret" in values:
        webhook.secret_sealed, webhook.previous_secrets = runtime.secret_box.seal(values["secret"]), []
    if values.get("active") and not webhook.active and webhook.disabled_reason is not None:
        raise Conflict(
            f"Its circuit disabled this webhook ({webhook.disabled_reason}): a successful test "
            "(POST /admin/webhooks/{id}/test) enables it again"
        )
    for name in ("name", "events", "active", *nullable):
        if name in values:
            setattr(webhook, name, values[name])
    webhook.updated_at = utcnow()
    await session.flush()
    audit.record(
        session,
        "webhook.updated",
        resource_type="webhook",
        resource_id=webhook.id,
        details={**_audited(webhook), "changed": sorted(values), "secret_changed": "secret" in values},
    )
    if values.get("active"):
        # Deliveries that waited while it was inactive may go now.
        await announce_deliveries(session)
    return webhook


async def delete_webhook(session: AsyncSession, webhook: Webhook) -> None:
    """Its deliveries, pending or not, go with it."""
    await session.delete(webhook)
    await session.flush()
    audit.record(
        session, "webhook.deleted", resource_type="webhook", resource_id=webhook.id, details=_audited(webhook)
    )


async def rotate_secret(
    session: AsyncSession, runtime: Runtime, webhook: Webhook, body: RotateSecret
) -> tuple[Webhook, str | None]:
    """Set a new secret; the old one keeps signing (beside the new) for the grace period. Returns
    the generated secret when none was given: shown once, like an API key."""
    now = utcnow()
    generated = None if body.secret else "whsec_" + secrets.token_urlsafe(32)
    new_secret = body.secret or generated
    assert new_secret is not None
    still_valid = [e for e in webhook.previous_secrets if e["expires_at"] > now.isoformat()]
    if body.grace_period_seconds > 0:
        expires = (now + timedelta(seconds=body.grace_period_seconds)).isoformat()
        still_valid.append({"sealed": webhook.secret_sealed, "expires_at": expires})
    webhook.previous_secrets = still_valid
    webhook.secret_sealed = runtime.secret_box.seal(new_secret)
    webhook.updated_at = now
    await session.flush()
    audit.record(
        session,
        "webhook.secret_rotated",
        resource_type="webhook",
        resource_id=webhook.id,
        details={"grace_period_seconds": body.grace_period_seconds},
    )
    return webhook, generated


async def send_test(
    session: AsyncSession, runtime: Runtime, webhook: Webhook, body: TestDelivery
) -> tuple[dict[str, Any], dict[str, Any]]:
    """One attempt now, for this webhook only (active or not); a failure retries like any other.
    Returns the delivery (with its attempts) and the attempt's outcome."""
    now = utcnow()
    event = Event(name=body.event_type, data=body.test_data, is_test=True, occurred_at=now)
    session.add(event)
    await session.flush()
    delivery = Delivery(
        webhook_id=webhook.id,
        event_id=event.id,
        status="pending",
        max_attempts=webhook.retry_policy["max_attempts"],
        next_attempt_at=now,
    )
    session.add(delivery)
    await session.flush()
    [claim] = await claim_due(session, runtime, limit=1, delivery_id=delivery.id)
    await commit_early(session)  # no transaction is held across the HTTP call
    allow_private = runtime.settings.webhook_allow_private_urls
    async with delivery_client(allow_private=allow_private, max_connections=1) as client:
        outcome = await attempt(client, claim, runtime.settings.webhook_timeout_seconds)
    count_attempt(runtime, outcome)
    await record_outcome(runtime, claim, outcome)
    if outcome.success and webhook.disabled_reason is not None:
        await _enable_after_test(runtime, webhook.id)
    async with runtime.db.transaction(write=False) as reader:
        detail = delivery_detail(await get_delivery(reader, delivery.id))
    return detail, detail["attempts"][-1]


async def _enable_after_test(runtime: Runtime, webhook_id: str) -> None:
    """A successful test closes the circuit of a webhook it disabled: active again, and what waited
    for it goes now."""
    async with runtime.db.transaction(write=True) as session:
        webhook = await get_webhook(session, webhook_id)
        if webhook.disabled_reason is None:
            return
        reason = webhook.disabled_reason
        webhook.active, webhook.disabled_reason = True, None
        webhook.failing_since, webhook.consecutive_failures, webhook.failing_warnings = None, 0, 0
        webhook.updated_at = utcnow()
        await session.flush()
        audit.record(
            session,
            "webhook.enabled",
            resource_type="webhook",
            resource_id=webhook.id,
            details={"after": "successful test", "was_disabled_for": reason},
        )
        await announce_deliveries(session)


async def list_deliveries(
    session: AsyncSession, reader: Principal, query: ListQuery, *, webhook: Webhook | None = None
) -> Page[Delivery]:
    # An event about a matter the reader is walled off from: its delivery is left out (a lookup
    # by primary key per delivery listed, not a scan of the events).
    walled = select(Event.id).where(
        Event.id == Delivery.event_id, ~outside_walls(reader, Event.data["case_id"].as_string())
    )
    conditions = [~walled.exists()]
    if webhook is not None:
        conditions.append(Delivery.webhook_id == webhook.id)
    return await fetch_page(session, DELIVERY_LIST, query, conditions=conditions)


async def retry_delivery(session: AsyncSession, runtime: Runtime, delivery: Delivery) -> Delivery:
    """Send a dead (or waiting) delivery again now, with a fresh attempt budget and deadline."""
    if delivery.status == "succeeded":
        raise Conflict("This delivery has already succeeded")
    if delivery.lease_expires_at is not None and delivery.lease_expires_at > utcnow():
        raise Conflict("This delivery is being attempted right now")
    webhook = await get_webhook(session, delivery.webhook_id)
    now = utcnow()
    delivery.status = "pending"
    delivery.max_attempts = delivery.attempts_made + webhook.retry_policy["max_attempts"]
    delivery.first_attempt_at = None
    delivery.next_attempt_at = now
    delivery.updated_at = now
    await session.flush()
    await announce_deliveries(session)
    return delivery
