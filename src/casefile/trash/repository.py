"""The trash queries: how they are listed (`ListSpec`), searched and filtered."""

from __future__ import annotations

from casefile.listing import ListSpec, projectable
from casefile.models import TrashItem
from casefile.trash.schemas import RESOURCE_TYPES, TrashItemOut

TRASH_LIST = ListSpec(
    model=TrashItem,
    sortable={"deleted_at": TrashItem.deleted_at},
    default_sort="deleted_at",
    tiebreak=TrashItem.id,
    output_fields=projectable(TrashItemOut),
    filters={"resource_type": TrashItem.resource_type, "case_id": TrashItem.case_id},
    filter_choices={"resource_type": RESOURCE_TYPES},
)
