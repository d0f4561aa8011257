"""The groups queries: how they are listed (`ListSpec`), searched and filtered."""

from __future__ import annotations

from sqlalchemy import func

from casefile.groups.schemas import GroupOut
from casefile.listing import ListSpec, projectable
from casefile.models import Group

GROUP_LIST = ListSpec(
    model=Group,
    sortable={"name": func.lower(Group.name), "created_at": Group.created_at},
    default_sort="name",
    tiebreak=Group.id,
    output_fields=projectable(GroupOut),
)
