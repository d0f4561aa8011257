"""`/documents/{id}/versions`: a document's versions (docs/api-conventions.md#document-versions)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import JSONResponse, Response

from casefile import envelope
from casefile.access.dependencies import DocumentInPath, DocumentsRead, DocumentsWrite, DocumentToWrite
from casefile.access.matter import document_for
from casefile.access.visibility import IdOnlyOut
from casefile.documents import versions
from casefile.documents.content import CONTENT_RESPONSES, send_content
from casefile.documents.repository import VERSION_LIST
from casefile.documents.schemas import DocumentOut, DocumentVersionOut
from casefile.envelope import Envelope, PageEnvelope
from casefile.listing import ListQuery, list_query
from casefile.request_scope import RuntimeDep, SessionDep
from casefile.routing import streams_its_body

router = APIRouter(tags=["documents"])

VersionListQuery = Annotated[ListQuery, Depends(list_query(VERSION_LIST))]
VersionNumber = Annotated[int, Path(ge=1, le=2**31 - 1, description="The version's number, from 1")]

_VERSION_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "additionalProperties": False,  # any other field: 422 "Unknown field"
                    "properties": {"file": {"type": "string", "format": "binary"}},
                }
            }
        },
    }
}


@router.post(
    "/documents/{document_id}/versions",
    response_model=Envelope[DocumentOut | IdOnlyOut],
    status_code=201,
    openapi_extra=_VERSION_BODY,
)
@streams_its_body
async def add_version(
    request: Request,
    principal: DocumentsWrite,
    document: DocumentToWrite,
    session: SessionDep,
    runtime: RuntimeDep,
) -> JSONResponse:
    """Upload a new version of the document's content (multipart/form-data, one `file`): the same
    limits, streaming and type detection as an upload. It becomes the current version (the
    document's `content`, `sha256`, `file_*` and `version`); identical bytes are stored once.
    Emits `document.updated` with the version number and queues the document for processing
    again. 409 `LEGAL_HOLD` while its case is under a legal hold."""
    updated = await versions.add_version(
        session,
        runtime,
        principal,
        document,
        body=request.stream(),
        content_type=request.headers.get("content-type", ""),
    )
    return envelope.created(DocumentOut.dump_for(updated, principal))


@router.get("/documents/{document_id}/versions", response_model=PageEnvelope[DocumentVersionOut])
async def list_versions(
    document_id: str, principal: DocumentsRead, session: SessionDep, query: VersionListQuery
) -> JSONResponse:
    """The document's versions, oldest first by default (`sort=version`, `order=desc` for the
    newest first); paged by `page` or `cursor`, as many as there are."""
    document = await document_for(session, principal, document_id)
    page = await versions.list_versions(session, document, query)
    return envelope.listed(page, query, DocumentVersionOut.dump)


@router.get("/documents/{document_id}/versions/{number}", response_model=Envelope[DocumentVersionOut])
async def get_version(
    number: VersionNumber, _: DocumentsRead, document: DocumentInPath, session: SessionDep
) -> JSONResponse:
    """One version's details. 404 for a number the document has not reached."""
    version = await versions.get_version(session, document, number)
    await versions.record_version_read(session, document, version)
    return envelope.ok(DocumentVersionOut.dump(version))


@router.get(
    "/documents/{document_id}/versions/{number}/content", responses=CONTENT_RESPONSES, response_class=Response
)
@router.head(
    "/documents/{document_id}/versions/{number}/content", responses=CONTENT_RESPONSES, response_class=Response
)
async def download_version(
    request: Request,
    number: VersionNumber,
    _: DocumentsRead,
    document: DocumentInPath,
    session: SessionDep,
    runtime: RuntimeDep,
) -> Response:
    """That version's bytes: its ETag is its SHA-256; `If-None-Match`, `Range` and `HEAD` as for
    the document's content. Recorded as a `document.download` of that version."""
    version = await versions.get_version(session, document, number)
    return await send_content(request, session, runtime, document, version)
