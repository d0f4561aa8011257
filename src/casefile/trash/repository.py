"""The trash queries: how they are listed (`ListSpec`), searched and filtered."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.listing import ListSpec, projectable
from casefile.models import Case, Document, TrashItem
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


async def item_titles(session: AsyncSession, items: Sequence[TrashItem]) -> dict[str, str]:
    """The title of each listed item and of its case (for the web app's trash page; the caller
    listed the items, so it may see them)."""
    case_ids = {item.case_id for item in items} | {i.id for i in items if i.resource_type == "case"}
    document_ids = [item.id for item in items if item.resource_type == "document"]
    titles: dict[str, str] = {}
    if case_ids:
        rows = await session.execute(select(Case.id, Case.title).where(Case.id.in_(sorted(case_ids))))
        titles.update({row.id: row.title for row in rows})
    if document_ids:
        rows = await session.execute(select(Document.id, Document.title).where(Document.id.in_(document_ids)))
        titles.update({row.id: row.title for row in rows})
    return titles
