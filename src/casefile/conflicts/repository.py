"""The conflicts queries: how they are listed (`ListSpec`), searched and filtered."""

from __future__ import annotations

from casefile.conflicts.schemas import ConflictCheckOut
from casefile.listing import ListSpec, projectable
from casefile.models import ConflictCheck

CONFLICT_CHECK_LIST = ListSpec(
    model=ConflictCheck,
    sortable={"created_at": ConflictCheck.created_at},
    default_sort="created_at",
    tiebreak=ConflictCheck.id,
    output_fields=projectable(ConflictCheckOut),
    filters={"case_id": ConflictCheck.case_id, "created_by": ConflictCheck.created_by},
)
