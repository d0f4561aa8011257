from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from casefile import envelope
from casefile.access.matter import Level, case_for
from casefile.auth.permissions import Permission
from casefile.deadlines import service
from casefile.deadlines.dependencies import DeadlinesRead, DeadlinesWrite, RuleSetsRead, RuleSetsWrite
from casefile.deadlines.repository import DEADLINE_LIST
from casefile.deadlines.rulesets import RuleSetDefinition
from casefile.deadlines.schemas import ComputeOut, ComputeRequest, DeadlineMove, DeadlineOut, RuleSetOut
from casefile.envelope import DeletedOut, Envelope, PageEnvelope
from casefile.errors import permission_missing
from casefile.listing import ListQuery, list_query
from casefile.request_scope import SessionDep
from casefile.routing import CURRENT_PREFIX

router = APIRouter(tags=["deadlines"])

DeadlineListQuery = Annotated[ListQuery, Depends(list_query(DEADLINE_LIST))]


@router.get("/deadline-rule-sets", response_model=PageEnvelope[RuleSetOut])
async def list_rule_sets(_: RuleSetsRead, session: SessionDep) -> JSONResponse:
    """Every rule set: those shipped with this release, then the firm's own. The list is short and
    comes whole (one page)."""
    sets = [s.model_dump(mode="json") for s in await service.rule_sets(session)]
    return envelope.paginated(sets, page=1, limit=max(len(sets), 1), total=len(sets))


@router.get("/deadline-rule-sets/{rule_set_id}", response_model=Envelope[RuleSetOut])
async def get_rule_set(rule_set_id: str, _: RuleSetsRead, session: SessionDep) -> JSONResponse:
    return envelope.ok((await service.get_rule_set(session, rule_set_id)).model_dump(mode="json"))


@router.post("/deadline-rule-sets", response_model=Envelope[RuleSetOut], status_code=201)
async def create_rule_set(
    body: RuleSetDefinition, principal: RuleSetsWrite, session: SessionDep
) -> JSONResponse:
    """Add a rule set of the firm's own (validated like the shipped ones: known holiday country
    and subdivision, unique rule ids). Ids are never reused: 409 for a taken or shipped id."""
    rule_set = (await service.create_rule_set(session, principal, body)).model_dump(mode="json")
    # A rule set's id is the firm's own name for it, not a prefixed one: its place is said here.
    return envelope.created(rule_set, location=f"{CURRENT_PREFIX}/deadline-rule-sets/{quote(rule_set['id'])}")


@router.post("/cases/{case_id}/deadlines/compute", response_model=Envelope[ComputeOut])
async def compute_deadlines(
    case_id: str, body: ComputeRequest, principal: DeadlinesRead, session: SessionDep
) -> JSONResponse:
    """Compute every rule of the rule set whose trigger is `trigger`, from `trigger_date`, each
    with its calculation trace. With `save: true` (needs `write:cases` too) they are stored as
    tasks of a saved deadline; saving a trigger the case already has moves it to the new date.
    Saving emits `deadline.saved` (or `deadline.moved`) and `task.*`."""
    if body.save and not principal.can(Permission.WRITE_CASES):
        raise permission_missing(Permission.WRITE_CASES)
    case = await case_for(session, principal, case_id, Level.WRITE if body.save else Level.READ)
    return envelope.ok(
        (await service.compute_for_case(session, principal, case, body)).model_dump(mode="json")
    )


@router.get("/cases/{case_id}/deadlines", response_model=PageEnvelope[DeadlineOut])
async def list_deadlines(
    case_id: str, principal: DeadlinesRead, session: SessionDep, query: DeadlineListQuery
) -> JSONResponse:
    """The case's saved deadlines (triggers); their tasks: `GET /tasks?deadline_id=…`."""
    case = await case_for(session, principal, case_id, Level.READ)
    return envelope.listed(await service.list_deadlines(session, case, query), query, DeadlineOut.dump)


@router.get("/cases/{case_id}/deadlines/{deadline_id}", response_model=Envelope[DeadlineOut])
async def get_deadline(
    case_id: str, deadline_id: str, principal: DeadlinesRead, session: SessionDep
) -> JSONResponse:
    case = await case_for(session, principal, case_id, Level.READ)
    return envelope.ok(DeadlineOut.dump(await service.read_deadline(session, case, deadline_id)))


@router.patch("/cases/{case_id}/deadlines/{deadline_id}", response_model=Envelope[ComputeOut])
async def move_deadline(
    case_id: str, deadline_id: str, body: DeadlineMove, principal: DeadlinesWrite, session: SessionDep
) -> JSONResponse:
    """Change the trigger date: every deadline is recomputed and its task moves to the new date.
    Emits `deadline.moved` and `task.updated` for each task moved."""
    case = await case_for(session, principal, case_id, Level.WRITE)
    deadline = await service.deadline_of_case(session, case, deadline_id)
    out = await service.move_deadline(session, principal, deadline, body.trigger_date)
    return envelope.ok(out.model_dump(mode="json"))


@router.delete("/cases/{case_id}/deadlines/{deadline_id}", response_model=Envelope[DeletedOut])
async def delete_deadline(
    case_id: str, deadline_id: str, principal: DeadlinesWrite, session: SessionDep
) -> JSONResponse:
    """Remove a saved deadline and its open tasks (done and cancelled ones stay, unlinked). Emits
    `task.deleted` for each and `deadline.deleted`."""
    case = await case_for(session, principal, case_id, Level.WRITE)
    deadline = await service.deadline_of_case(session, case, deadline_id)
    await service.delete_deadline(session, principal, deadline)
    return envelope.deleted(deadline.id)
