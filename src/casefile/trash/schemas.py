from __future__ import annotations

from datetime import timedelta
from typing import Any, Literal

from casefile.clock import format_timestamp
from casefile.models import TrashItem
from casefile.schemas import OutModel, Timestamp

RESOURCE_TYPES = ("case", "document")


class TrashItemOut(OutModel):
    id: str  # the case's or document's own id
    resource_type: Literal["case", "document"]
    case_id: str
    deleted_at: Timestamp
    deleted_by: str | None
    purge_after: Timestamp  # deleted_at + retention.trash_days: the retention purge's date

    @classmethod
    def dump_item(cls, item: TrashItem, trash_days: int) -> dict[str, Any]:
        return {
            "id": item.id,
            "resource_type": item.resource_type,
            "case_id": item.case_id,
            "deleted_at": format_timestamp(item.deleted_at),
            "deleted_by": item.deleted_by,
            "purge_after": format_timestamp(item.deleted_at + timedelta(days=trash_days)),
        }
