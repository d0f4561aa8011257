"""The audit lists' query: filters and the cursor page."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Query

from casefile.audit.repository import AUDIT_LIST, AuditFilters
from casefile.audit.service import parse_filters
from casefile.listing import ListQuery, cursor_query
from casefile.schemas import QueryTime

ActorParam = Annotated[str | None, Query(max_length=40, description="Only this actor (user or API key id)")]
ActionParam = Annotated[str | None, Query(max_length=64, description="Only this action, e.g. `case.read`")]
SinceParam = Annotated[
    QueryTime | None, Query(description="At or after this time (ISO 8601, UTC if no zone)")
]
UntilParam = Annotated[QueryTime | None, Query(description="Before this time (ISO 8601; UTC if no zone)")]


def trail_filters(
    actor_id: ActorParam = None,
    case_id: Annotated[str | None, Query(max_length=40, description="Only entries about this case")] = None,
    action: ActionParam = None,
    since: SinceParam = None,
    until: UntilParam = None,
) -> AuditFilters:
    return parse_filters(actor_id=actor_id, case_id=case_id, action=action, since=since, until=until)


def case_trail_filters(
    actor_id: ActorParam = None,
    action: ActionParam = None,
    since: SinceParam = None,
    until: UntilParam = None,
) -> AuditFilters:
    """For `/cases/{case_id}/audit`, whose path names the case."""
    return parse_filters(actor_id=actor_id, case_id=None, action=action, since=since, until=until)


TrailFilters = Annotated[AuditFilters, Depends(trail_filters)]
CaseTrailFilters = Annotated[AuditFilters, Depends(case_trail_filters)]
AuditPage = Annotated[ListQuery, Depends(cursor_query(AUDIT_LIST))]
