"""The webhook or delivery a path names. (Only administrators reach these endpoints: the `/admin`
router checks that before its routes' own dependencies run.)"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends

from casefile.models import Delivery, Webhook
from casefile.request_scope import in_path
from casefile.webhooks.service import get_delivery, get_webhook

WebhookInPath = Annotated[Webhook, Depends(in_path(get_webhook, "webhook_id"))]
DeliveryInPath = Annotated[Delivery, Depends(in_path(get_delivery, "delivery_id"))]
