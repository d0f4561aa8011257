"""Search across the matters and documents the user may see (`GET /search`'s service: hidden
matters are left out by its queries), with the matched words highlighted."""

from __future__ import annotations

from typing import Any, Literal
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from markupsafe import Markup

from casefile.auth.dependencies import CurrentPrincipal
from casefile.errors import AuthError, ValidationFailed
from casefile.request_scope import SessionDep
from casefile.search import service as search_service
from casefile.search.schemas import MAX_QUERY_LENGTH
from casefile.web.templating import render, viewer

router = APIRouter(include_in_schema=False)

PAGE_SIZE = 20
KINDS = {"": "Matters and documents", "case": "Matters only", "document": "Documents only"}


@router.get("/app/search")
async def search(request: Request, principal: CurrentPrincipal, session: SessionDep) -> HTMLResponse:
    me = await viewer(session, principal)
    q = request.query_params.get("q", "").strip()[:MAX_QUERY_LENGTH]
    kind = request.query_params.get("kind", "")
    page_number = request.query_params.get("page", "1")
    page = int(page_number) if page_number.isdigit() and 0 < int(page_number) <= 100 else 1
    hits: list[dict[str, Any]] = []
    total, error = 0, ""
    only: Literal["case", "document"] | None = (
        "case" if kind == "case" else "document" if kind == "document" else None
    )
    if q:
        try:
            found = await search_service.search(
                session,
                principal,
                q,
                kind=only,
                page=page,
                limit=PAGE_SIZE,
            )
        except (ValidationFailed, AuthError) as exc:
            await session.rollback()
            error = exc.description if isinstance(exc, AuthError) else exc.message
        else:
            hits, total = found.items, found.total
            for hit in hits:
                # The service escapes the text and marks the matched words itself (<mark>).
                hit["snippet_html"] = Markup(hit["snippet"]["text"])  # noqa: S704
    more = page * PAGE_SIZE < total
    context = {
        "q": q,
        "kind": kind,
        "kinds": KINDS,
        "hits": hits,
        "total": total,
        "error": error,
        "next_url": "/app/search?" + urlencode({"q": q, "kind": kind, "page": page + 1}) if more else "",
    }
    return render(request, "search.html", context, me=me, nav="search")
