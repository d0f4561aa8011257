"""Matter exports: `POST /cases/{case_id}/exports` queues one, `GET /exports/{id}` shows its
progress, `GET /exports/{id}/content` sends the zip (docs/matter-export.md)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse, StreamingResponse

from casefile import envelope
from casefile.access.dependencies import CasesRead
from casefile.envelope import Envelope
from casefile.exports import service
from casefile.exports.schemas import ExportOut
from casefile.request_scope import RuntimeDep, SessionDep

router = APIRouter(tags=["exports"])

_ZIP = {"application/zip": {"schema": {"type": "string", "format": "binary"}}}
_CONTENT_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"content": _ZIP, "description": "The zip (`ETag`: its SHA-256; `Content-Length`)"},
    304: {"description": "`If-None-Match` names the zip's ETag"},
    404: {"description": "No such export, not yours, or its matter is no longer visible to you"},
    409: {"description": "The export has not succeeded (yet): see `GET /exports/{export_id}`"},
}


@router.post(
    "/cases/{case_id}/exports",
    response_model=Envelope[ExportOut],
    status_code=202,
    responses={404: {"description": "No such case, or one you may not see (restricted, walled, key limit)"}},
)
async def create_export(case_id: str, principal: CasesRead, session: SessionDep) -> JSONResponse:
    """Export the matter's whole file as a zip, as a job: 202 with the export (`Location`).
    It holds what you may read of the matter: its documents (`read:documents`), notes with their
    history, tasks, deadlines with their calculation, parties and their contacts (`read:contacts`
    for their details), the matter's audit entries with proofs against a signed tree head (with
    `manage` on it), an `index.html` and a `manifest.json` of every file's SHA-256 and size.
    Recorded as `export.requested`; emits `export.completed` when the zip is ready."""
    job = await service.create_export(session, principal, case_id)
    response = envelope.ok(service.dump(job), status_code=202)
    response.headers["Location"] = envelope.location_of({"id": job.id})
    return response


@router.get(
    "/exports/{export_id}",
    response_model=Envelope[ExportOut],
    responses={404: {"description": "No such export, or not yours (an administrator sees every one)"}},
)
async def get_export(export_id: str, principal: CasesRead, session: SessionDep) -> JSONResponse:
    """An export you asked for: its progress, then its size, SHA-256 and summary."""
    return envelope.ok(service.dump(await service.export_for(session, principal, export_id)))


@router.get("/exports/{export_id}/content", responses=_CONTENT_RESPONSES, response_class=Response)
@router.head("/exports/{export_id}/content", responses=_CONTENT_RESPONSES, response_class=Response)
async def download_export(
    request: Request, export_id: str, principal: CasesRead, session: SessionDep, runtime: RuntimeDep
) -> Response:
    """The finished zip, streamed from the content store, with an ETag (its SHA-256) and
    `If-None-Match` (304). Check it with `casefile export verify FILE.zip`. Recorded as
    `export.downloaded`."""
    job = await service.export_for(session, principal, export_id)
    sha256, size = service.finished_content(job)
    etag = f'"{sha256}"'
    headers = {
        "ETag": etag,
        "Content-Disposition": f'attachment; filename="matter-export-{job.id}.zip"',
        "X-Content-Type-Options": "nosniff",
        "Cache-Control": "private, no-cache",
    }
    if etag in {
        tag.strip().removeprefix("W/") for tag in (request.headers.get("if-none-match") or "").split(",")
    }:
        return Response(status_code=304, headers=headers)
    headers["Content-Length"] = str(size)
    if request.method == "HEAD":
        return Response(status_code=200, media_type="application/zip", headers=headers)
    await service.record_download(session, job)
    return StreamingResponse(runtime.store.read(sha256), media_type="application/zip", headers=headers)
