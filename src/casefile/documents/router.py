from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

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
from casefile.documents.repository import DOCUMENT_LIST
from casefile.documents.schemas import DocumentOut, DocumentUpdate
from casefile.envelope import DeletedOut, Envelope, PageEnvelope
from casefile.errors import RangeNotSatisfiable
from casefile.listing import ListQuery, Projection, fields_query, list_query, project
from casefile.models import Document
from casefile.request_scope import RuntimeDep, SessionDep
from casefile.routing import streams_its_body
from casefile.storage.sniff import SUPPORTED_TYPES

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


# The bytes as stored, in the document's detected type (one of the supported upload types).
_BINARY = {"schema": {"type": "string", "format": "binary"}}
_CONTENT_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "content": {
            media_type: _BINARY for media_type in ("application/octet-stream", *sorted(SUPPORTED_TYPES))
        },
        "description": "The document's bytes, in its detected type (`Content-Type`)",
    },
    206: {
        "content": {
            media_type: _BINARY for media_type in ("application/octet-stream", *sorted(SUPPORTED_TYPES))
        },
        "description": "The requested byte range (`Content-Range`)",
    },
    304: {"description": "`If-None-Match` names the current ETag"},
    416: {"description": "The `Range` is outside the document"},
}


@router.get("/documents/{document_id}/content", responses=_CONTENT_RESPONSES, response_class=Response)
@router.head("/documents/{document_id}/content", responses=_CONTENT_RESPONSES, response_class=Response)
async def download_document(
    request: Request, _: DocumentsRead, document: DocumentInPath, session: SessionDep, runtime: RuntimeDep
) -> Response:
    """The document's bytes, with its detected type, an ETag (the SHA-256), `If-None-Match` (304)
    and single `Range` requests (206). `HEAD` answers the same, headers only (the same checks)."""
    etag = f'"{document.sha256}"'
    headers = {
        "ETag": etag,
        "Accept-Ranges": "bytes",
        "Content-Disposition": content_disposition(document),
        "X-Content-Type-Options": "nosniff",
        "Cache-Control": "private, no-cache",
    }
    if etag in _etags(request.headers.get("if-none-match")):
        return Response(status_code=304, headers=headers)
    size = document.file_size
    start, length, status = 0, size, 200
    byte_range = _single_range(request.headers.get("range"), size)
    if byte_range is not None:
        start, end = byte_range
        length, status = end - start + 1, 206
        headers["Content-Range"] = f"bytes {start}-{end}/{size}"
    headers["Content-Length"] = str(length)
    if request.method == "HEAD":  # the same status and headers, and no read of the content
        return Response(status_code=status, media_type=document.file_type, headers=headers)
    await service.record_download(session, document, headers.get("Content-Range"))
    return StreamingResponse(
        runtime.store.read(document.sha256, start, length),
        status_code=status,
        media_type=document.file_type,
        headers=headers,
    )


def content_disposition(document: Document) -> str:
    """RFC 6266: an ASCII fallback plus the exact name as `filename*` (RFC 5987 encoding). The name
    was sanitized at upload (no path, no control characters, no quotes)."""
    name = document.file_name
    fallback = name.encode("ascii", "replace").decode("ascii").replace("?", "_")
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"


def _etags(header: str | None) -> set[str]:
    if not header:
        return set()
    return {tag.strip().removeprefix("W/") for tag in header.split(",")}


def _single_range(header: str | None, size: int) -> tuple[int, int] | None:
    """(first, last) byte of a single `bytes=` range; None to send everything (no header, several
    ranges, or a form we do not serve)."""
    if not header or not header.startswith("bytes=") or "," in header:
        return None
    first, sep, last = header.removeprefix("bytes=").strip().partition("-")
    if not sep or not (first.isdigit() or last.isdigit()) or (first and not first.isdigit()):
        return None
    if last and not last.isdigit():
        return None
    if not first:  # the last N bytes
        length = int(last)
        if length == 0:
            raise RangeNotSatisfiable(headers={"Content-Range": f"bytes */{size}"})
        return max(0, size - length), size - 1
    start = int(first)
    end = min(int(last), size - 1) if last else size - 1
    if start >= size or end < start:
        raise RangeNotSatisfiable(headers={"Content-Range": f"bytes */{size}"})
    return start, end


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
