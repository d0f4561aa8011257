"""The holds queries: how they are listed (`ListSpec`), searched and filtered."""

from __future__ import annotations

from casefile.holds.schemas import HoldOut
from casefile.listing import ListSpec, projectable
from casefile.models import LegalHold

HOLD_LIST = ListSpec(
    model=LegalHold,
    sortable={"created_at": LegalHold.created_at},
    default_sort="created_at",
    tiebreak=LegalHold.id,
    output_fields=projectable(HoldOut),
)
