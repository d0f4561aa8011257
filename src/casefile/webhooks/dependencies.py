"""The webhook or delivery a path names. (Only administrators reach these endpoints: the `/admin`
router checks that before its routes' own dependencies run.)"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends

from casefile.access.matter import ensure_outside_walls
from casefile.auth.dependencies import AdminPrincipal
from casefile.models import Delivery, Webhook
from casefile.request_scope import SessionDep, in_path
from casefile.webhooks.service import get_delivery, get_webhook

WebhookInPath = Annotated[Webhook, Depends(in_path(get_webhook, "webhook_id"))]


async def delivery_in_path(admin: AdminPrincipal, session: SessionDep, delivery_id: str) -> Delivery:
    """The delivery, unless its event is about a matter the administrator is walled off from:
    then 404, as for a delivery that does not exist (docs/api-conventions.md#administrators-behind-walls)."""
    delivery = await get_delivery(session, delivery_id)
    await ensure_outside_walls(session, admin, delivery.event.data.get("case_id"), "Delivery not found")
    return delivery


DeliveryInPath = Annotated[Delivery, Depends(delivery_in_path)]
