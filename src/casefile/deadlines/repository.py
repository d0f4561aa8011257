"""The deadlines queries: how they are listed (`ListSpec`), searched and filtered."""

from __future__ import annotations

from sqlalchemy import ColumnElement, and_, func, or_
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.listing import ListSpec
from casefile.models import Deadline


async def _search_deadlines(session: AsyncSession, words: list[str]) -> ColumnElement[bool]:
    # Within one case: each word in the trigger's or the rule set's name.
    columns = (Deadline.trigger, Deadline.rule_set)
    return and_(*(or_(*(func.lower(c).like(f"%{w}%") for c in columns)) for w in words))


DEADLINE_LIST = ListSpec(
    model=Deadline,
    sortable={"trigger_date": Deadline.trigger_date, "created_at": Deadline.created_at},
    default_sort="created_at",
    tiebreak=Deadline.id,
    output_fields=dict.fromkeys(
        (
            "id",
            "case_id",
            "rule_set",
            "rule_set_version",
            "trigger",
            "trigger_date",
            "created_by",
            "created_at",
            "updated_at",
        )
    ),
    filters={"rule_set": Deadline.rule_set, "trigger": Deadline.trigger},
    search=_search_deadlines,
)
