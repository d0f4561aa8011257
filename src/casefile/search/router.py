from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse

from casefile import envelope
from casefile.access.dependencies import CasesRead, DocumentsRead
from casefile.access.matter import case_for
from casefile.auth.dependencies import CurrentPrincipal
from casefile.envelope import Envelope, PageEnvelope
from casefile.listing import DEFAULT_LIMIT, MAX_LIMIT, MAX_PAGE
from casefile.request_scope import RuntimeDep, SessionDep
from casefile.search import service
from casefile.search.schemas import MAX_QUERY_LENGTH, AskOut, AskRequest, SearchHit

router = APIRouter(tags=["search"])


@router.get("/search", response_model=PageEnvelope[SearchHit])
async def search(
    *,
    principal: CurrentPrincipal,
    session: SessionDep,
    runtime: RuntimeDep,
    q: Annotated[str, Query(min_length=1, max_length=MAX_QUERY_LENGTH, description="What to look for")],
    page: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 1,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
    kind: Annotated[Literal["case", "document"] | None, Query(description="Only this kind of hit")] = None,
) -> JSONResponse:
    """Search cases (title, case number, client, description) and documents (their passages, by
    full text and by meaning, and their titles), best first. Case hits need `read:cases`,
    document hits `read:documents`."""
    found = await service.search(session, principal, q, kind=kind, page=page, limit=limit)
    return envelope.paginated(found.items, page=page, limit=limit, total=found.total)


@router.post(
    "/cases/{case_id}/ask",
    response_model=Envelope[AskOut],
    responses={503: {"description": "This server was installed without the AI extra (`AI_UNAVAILABLE`)"}},
)
async def ask(
    case_id: str, body: AskRequest, principal: CasesRead, _: DocumentsRead, session: SessionDep
) -> JSONResponse:
    """Answer a question from the case's documents only: the best-supporting sentences verbatim,
    each cited (document, page, character offsets in the page's text), and the passages they
    come from. `grounded` is false, with no answer, when nothing in the documents supports one."""
    case = await case_for(session, principal, case_id)
    service.require_models()
    # Imported here: asking loads the entity rules and numpy, which a slim API node lacks.
    from casefile.search import ask as answering

    return envelope.ok(await answering.ask(session, case, body.question))
