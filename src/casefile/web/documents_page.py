"""A document's page on the matter: an inline preview of a PDF or an image, download, tags, its
versions (newest first, each downloadable; a new version uploaded as `POST /documents/{id}/versions`
adds one), and its AI summary and entities when it has been processed; a citation of "Ask" opens
it at the cited passage (`?page=&start=&end=`). The document is loaded as `GET /documents/{id}`
loads it (a document of a matter the user may not see is a 404) and changed by the API's services."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from casefile.access.dependencies import DocumentInPath, DocumentsRead
from casefile.access.matter import Level, case_for, document_for
from casefile.auth.browser import csrf_token
from casefile.auth.permissions import Permission
from casefile.documents import router as documents_api
from casefile.documents import service as documents_service
from casefile.documents import versions
from casefile.documents import versions_router as versions_api
from casefile.documents.repository import VERSION_LIST
from casefile.documents.schemas import DocumentUpdate, parse_tag_fields
from casefile.errors import NotFound, ValidationFailed, permission_missing
from casefile.listing import build_list_query
from casefile.models import Document
from casefile.request_scope import RuntimeDep, SessionDep
from casefile.routing import streams_its_body
from casefile.search.repository import PassageRow, passages_on_page
from casefile.web.matter import matter_page, people
from casefile.web.security import Changer
from casefile.web.templating import viewer

router = APIRouter(include_in_schema=False)

# Shown inline: types a browser displays itself without running the document's own script as our
# page (no HTML, no SVG). PDFs go in an <iframe> (the browser's viewer), images in an <img>.
PREVIEW_FRAMES = frozenset({"application/pdf"})
PREVIEW_IMAGES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
# The preview's own policy: it may be framed by our pages only, and loads and runs nothing.
PREVIEW_CSP = "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; frame-ancestors 'self'"
ENTITY_KINDS = ("people", "organizations", "dates", "money", "citations")
VERSIONS_PER_PAGE = "20"


def preview_kind(document: Document) -> str:
    if document.file_type in PREVIEW_FRAMES:
        return "frame"
    return "image" if document.file_type in PREVIEW_IMAGES else ""


def _int(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() and len(value) < 10 else None


def cited_passage(passages: list[PassageRow], start: int, end: int) -> dict[str, str] | None:
    """The stored passage holding the cited characters (offsets in the page's text), split around
    them so the page can mark them; None when no passage holds them (the document was reprocessed)."""
    holding = [p for p in passages if p.start <= start < p.end and start < end]
    if not holding:
        return None
    passage = next((p for p in holding if end <= p.end), holding[0])
    first, last = start - passage.start, min(end, passage.end) - passage.start
    text = passage.text
    return {"before": text[:first], "cited": text[first:last], "after": text[last:]}


@router.get("/app/documents/{document_id}")
async def document_page(
    request: Request,
    principal: DocumentsRead,
    document: DocumentInPath,
    session: SessionDep,
    runtime: RuntimeDep,
) -> HTMLResponse:
    await documents_service.record_document_read(session, document)
    case = await case_for(session, principal, document.case_id)
    me = await viewer(session, principal)
    page, start, end = (_int(request.query_params.get(n)) for n in ("page", "start", "end"))
    citation: dict[str, Any] | None = None
    if page is not None and start is not None and end is not None:
        passage = cited_passage(await passages_on_page(session, document.id, page), start, end)
        citation = {"page": page, "passage": passage}
    ai: dict[str, Any] = document.ai or {}
    entities = ai.get("entities") or {}
    newest_first = {"order": "desc", "limit": VERSIONS_PER_PAGE}
    if cursor := request.query_params.get("versions_cursor"):
        newest_first["cursor"] = cursor
    listed = await versions.list_versions(session, document, build_list_query(VERSION_LIST, newest_first))
    # Like an upload, a new version streams its multipart body: its CSRF token rides in the URL.
    token = csrf_token(runtime, principal.session_id) if principal.session_id else ""
    context = {
        "document": document,
        "preview": preview_kind(document),
        "ai": ai,
        "entities": [(kind, entities.get(kind) or []) for kind in ENTITY_KINDS if entities.get(kind)],
        "citation": citation,
        "people": await people(session, principal),
        "can_edit": principal.can(Permission.WRITE_DOCUMENTS),
        "versions": listed.rows,
        "older_versions_url": (
            f"/app/documents/{document.id}?" + urlencode({"versions_cursor": listed.next_cursor})
            if listed.next_cursor
            else ""
        ),
        "version_upload_url": f"/app/documents/{document.id}/versions?" + urlencode({"csrf_token": token}),
        "error": "",
    }
    return await matter_page(
        request, session, me, case, tab="documents", context=context, template="document"
    )


@router.get("/app/documents/{document_id}/preview")
async def preview(
    request: Request,
    principal: DocumentsRead,
    document: DocumentInPath,
    session: SessionDep,
    runtime: RuntimeDep,
) -> Response:
    """The content for an <iframe> or <img> of our pages: `GET /documents/{id}/content` itself (its
    checks, headers and audit entry), shown inline rather than saved, for the previewable types."""
    if not preview_kind(document):
        raise NotFound("This document has no preview")
    response = await documents_api.download_document(request, principal, document, session, runtime)
    disposition = response.headers.get("content-disposition", "")
    response.headers["Content-Disposition"] = disposition.replace("attachment", "inline", 1)
    response.headers["Content-Security-Policy"] = PREVIEW_CSP
    response.headers["X-Frame-Options"] = "SAMEORIGIN"
    return response


@router.get("/app/documents/{document_id}/versions/{number}/download")
async def download_version(
    request: Request,
    *,
    number: versions_api.VersionNumber,
    principal: DocumentsRead,
    document: DocumentInPath,
    session: SessionDep,
    runtime: RuntimeDep,
) -> Response:
    """Exactly `GET /documents/{id}/versions/{n}/content` (its checks, headers and audit entry)."""
    return await versions_api.download_version(request, number, principal, document, session, runtime)


@router.post("/app/documents/{document_id}/versions")
@streams_its_body
async def add_version(
    request: Request, document_id: str, principal: Changer, session: SessionDep, runtime: RuntimeDep
) -> Response:
    """A new version (one file in a multipart form), as `POST /documents/{id}/versions`: the same
    limits, checks, hold rule, audit entry and event."""
    if not principal.can(Permission.WRITE_DOCUMENTS):
        raise permission_missing(Permission.WRITE_DOCUMENTS)
    document = await document_for(session, principal, document_id, Level.WRITE)
    await versions.add_version(
        session,
        runtime,
        principal,
        document,
        body=request.stream(),
        content_type=request.headers.get("content-type", ""),
    )
    return RedirectResponse(f"/app/documents/{document_id}?saved=1", status_code=303)


@router.post("/app/documents/{document_id}/tags")
async def change_tags(
    request: Request, document_id: str, principal: Changer, session: SessionDep
) -> Response:
    """Replace the tags (one comma-separated field), as `PATCH /documents/{id}` with `tags`."""
    if not principal.can(Permission.WRITE_DOCUMENTS):
        raise permission_missing(Permission.WRITE_DOCUMENTS)
    document = await document_for(session, principal, document_id, Level.WRITE)
    value = str((await request.form()).get("tags") or "")
    try:
        tags = parse_tag_fields([value]) if value.strip() else []
    except ValueError as exc:
        raise ValidationFailed.on("tags", str(exc)) from None
    await documents_service.update_document(session, principal, document, DocumentUpdate(tags=tags))
    return RedirectResponse(f"/app/documents/{document.id}?saved=1", status_code=303)
