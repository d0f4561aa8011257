from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response

from casefile import envelope
from casefile.access.dependencies import (
    CaseToWrite,
    DocumentInPath,
    DocumentsDelete,
    DocumentsRead,
    DocumentsWrite,
)
from casefile.access.matter import Level, case_for, document_for
from casefile.access.visibility import IdOnlyOut
from casefile.documents import service
from casefile.documents.content import CONTENT_RESPONSES, send_content
from casefile.documents.repository import DOCUMENT_LIST
from casefile.documents.schemas import DocumentOut, DocumentUpdate
from casefile.documents.versions_router import router as versions_router
from casefile.envelope import DeletedOut, Envelope, PageEnvelope
from casefile.listing import ListQuery, Projection, fields_query, list_query, project
from casefile.request_scope import RuntimeDep, SessionDep
from casefile.routing import streams_its_body

router = APIRouter(tags=["documents"])

DocumentListQuery = Annotated[ListQuery, Depends(list_query(DOCUMENT_LIST))]
DocumentFields = Annotated[Projection | None, Depends(fields_query(DOCUMENT_LIST.output_fields))]

# A handler with a body or a query string loads its path's row itself: see auth.dependencies.


@router.get("/cases/{case_id}/documents", response_model=PageEnvelope[DocumentOut])
async def list_documents(
    case_id: str, principal: DocumentsRead, session: SessionDep, query: DocumentListQuery
) -> JSONResponse:
    """A case's documents: paginated, sortable (`uploaded_at`, `title`, `file_size`), `document_type`
    filter, `search` over title, description and file name."""
    case = await case_for(session, principal, case_id)
    return envelope.listed(await service.list_documents(session, case, query), query, DocumentOut.dump)


@router.post(
    "/cases/{case_id}/documents",
    response_model=Envelope[DocumentOut | IdOnlyOut],
    status_code=201,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "required": ["file"],
                        "additionalProperties": False,  # any other field: 422 "Unknown field"
                        "properties": {
                            "file": {"type": "string", "format": "binary"},
                            "title": {"type": "string", "description": "Default: the file name"},
                            "document_type": {"type": "string"},
                            "tags": {
                                "type": "array",
                                "items": {"type": "string"},
                                "description": (
                                    "Repeated fields, one comma-separated value, or a JSON array string"
                                ),
                            },
                            "description": {"type": "string"},
                        },
                    }
                }
            },
        }
    },
)
@streams_its_body
async def upload_document(
    request: Request, principal: DocumentsWrite, case: CaseToWrite, session: SessionDep, runtime: RuntimeDep
) -> JSONResponse:
    """Upload a document (multipart/form-data). The body is streamed to disk, never held in
    memory; the type is detected from the content. Emits `document.uploaded`."""
    document = await service.upload_document(
        session,
        runtime,
        principal,
        case,
        body=request.stream(),
        content_type=request.headers.get("content-type", ""),
    )
    return envelope.created(DocumentOut.dump_for(document, principal))


@router.get("/documents/{document_id}", response_model=Envelope[DocumentOut])
async def get_document(
    _: DocumentsRead,
    fields: DocumentFields,
    document: DocumentInPath,
    session: SessionDep,
    runtime: RuntimeDep,
) -> JSONResponse:
    await service.record_document_read(session, document)
    return envelope.ok(project(DocumentOut.dump(document), fields))


@router.get("/documents/{document_id}/content", responses=CONTENT_RESPONSES, response_class=Response)
@router.head("/documents/{document_id}/content", responses=CONTENT_RESPONSES, response_class=Response)
async def download_document(
    request: Request, _: DocumentsRead, document: DocumentInPath, session: SessionDep, runtime: RuntimeDep
) -> Response:
    """The document's bytes (its current version), with its detected type, an ETag (the SHA-256),
    `If-None-Match` (304) and single `Range` requests (206). `HEAD` answers the same, headers only
    (the same checks)."""
    return await send_content(request, session, runtime, document, document)


@router.delete("/documents/{document_id}", response_model=Envelope[DeletedOut])
async def delete_document(document_id: str, principal: DocumentsDelete, session: SessionDep) -> JSONResponse:
    """Move the document to the trash (restored or purged, with its content, in `/admin/trash`).
    Emits `document.deleted`. 409 `LEGAL_HOLD` while its case is under a legal hold."""
    document = await document_for(session, principal, document_id, Level.WRITE)
    await service.delete_document(session, principal, document)
    return envelope.deleted(document.id)


@router.put("/documents/{document_id}", response_model=Envelope[DocumentOut | IdOnlyOut])
@router.patch("/documents/{document_id}", response_model=Envelope[DocumentOut | IdOnlyOut])
async def update_document(
    document_id: str, body: DocumentUpdate, principal: DocumentsWrite, session: SessionDep
) -> JSONResponse:
    """Update title, document_type, tags or description (any subset). Emits `document.updated`."""
    document = await document_for(session, principal, document_id, Level.WRITE)
    updated = await service.update_document(session, principal, document, body)
    return envelope.ok(DocumentOut.dump_for(updated, principal))


# After this module's routes: `/documents/{id}/versions…` (documents.versions_router).
router.include_router(versions_router)
