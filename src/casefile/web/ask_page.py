"""Ask on a matter: a question answered from the matter's own documents (`POST /cases/{id}/ask`'s
service: verbatim sentences, each cited), each citation linking to the document's page at the
cited passage. The question is audited as through the API (`case.ask`)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from pydantic import ValidationError

from casefile.access.dependencies import CaseInPath, CasesRead
from casefile.access.matter import case_for
from casefile.auth.permissions import Permission, Principal
from casefile.error_handlers import validation_details
from casefile.errors import permission_missing
from casefile.request_scope import SessionDep
from casefile.search import service as search_service
from casefile.search.schemas import AskRequest
from casefile.web.matter import matter_page
from casefile.web.security import Changer
from casefile.web.templating import viewer

router = APIRouter(include_in_schema=False)


def _require(principal: Principal) -> None:
    for permission in (Permission.READ_CASES, Permission.READ_DOCUMENTS):
        if not principal.can(permission):
            raise permission_missing(permission)


def citation_url(sentence: dict[str, Any]) -> str:
    where = {"page": sentence["page"], "start": sentence["start"], "end": sentence["end"]}
    return f"/app/documents/{sentence['document_id']}?{urlencode(where)}#cited"


@router.get("/app/matters/{case_id}/ask")
async def ask_form(
    request: Request, principal: CasesRead, case: CaseInPath, session: SessionDep
) -> HTMLResponse:
    _require(principal)
    me = await viewer(session, principal)
    context = {"question": "", "result": None, "error": ""}
    return await matter_page(request, session, me, case, tab="ask", context=context)


@router.post("/app/matters/{case_id}/ask")
async def ask(request: Request, case_id: str, principal: Changer, session: SessionDep) -> HTMLResponse:
    _require(principal)
    case = await case_for(session, principal, case_id)
    question = str((await request.form()).get("question") or "").strip()
    me = await viewer(session, principal)
    try:
        body = AskRequest(question=question)
    except ValidationError as exc:
        error = "; ".join(d.message for d in validation_details(exc.errors()))
        refused: dict[str, Any] = {"question": question[:1000], "result": None, "error": error}
        return await matter_page(request, session, me, case, tab="ask", context=refused, status_code=422)
    search_service.require_models()
    # Imported here, as the API does: answering needs the AI extra (numpy, the entity rules).
    from casefile.search import ask as answering

    result = await answering.ask(session, case, body.question)
    titles = {p["document_id"]: p["document_title"] for p in result["passages"]}
    citations = [
        {**s, "title": titles.get(s["document_id"], "a document"), "url": citation_url(s)}
        for s in result["answer"]["sentences"]
    ]
    passages = [{**p, "url": citation_url(p)} for p in result["passages"]]
    context = {
        "question": body.question,
        "result": {**result, "citations": citations, "passages": passages},
        "error": "",
    }
    return await matter_page(request, session, me, case, tab="ask", context=context)
