"""The webhooks queries: how they are listed (`ListSpec`), searched and filtered."""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy import func

from casefile.listing import ListSpec, projectable
from casefile.models import DELIVERY_STATUSES, Delivery, Webhook
from casefile.webhooks.schemas import (
    DeliveryOut,
    WebhookOut,
)

WEBHOOK_LIST = ListSpec(
    model=Webhook,
    sortable={"created_at": Webhook.created_at, "name": func.lower(Webhook.name)},
    default_sort="created_at",
    tiebreak=Webhook.id,
    output_fields=projectable(WebhookOut),
)


DELIVERY_LIST = ListSpec(
    model=Delivery,
    sortable={"created_at": Delivery.created_at, "updated_at": Delivery.updated_at},
    default_sort="created_at",
    tiebreak=Delivery.id,
    output_fields=projectable(DeliveryOut),
    filters={"status": Delivery.status, "webhook_id": Delivery.webhook_id},
    filter_choices={"status": DELIVERY_STATUSES},
)

# Under /webhooks/{webhook_id}/deliveries the webhook is in the path, not a filter.
WEBHOOK_DELIVERY_LIST = replace(DELIVERY_LIST, filters={"status": Delivery.status})
