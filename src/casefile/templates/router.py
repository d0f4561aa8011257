"""`POST /cases` (a case, from a matter template or not) and the templates themselves: read by
callers who read cases, versioned by administrators under `/admin`."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Depends, Path
from fastapi.responses import JSONResponse

from casefile import envelope
from casefile.access.dependencies import CasesRead, CasesWrite
from casefile.access.visibility import IdOnlyOut
from casefile.auth.dependencies import AdminPrincipal
from casefile.cases.schemas import CaseOut
from casefile.envelope import Envelope, PageEnvelope
from casefile.models import MatterTemplate
from casefile.request_scope import RuntimeDep, SessionDep, in_path
from casefile.routing import CURRENT_PREFIX
from casefile.templates import service
from casefile.templates.schemas import CaseOpen, TemplateBody, TemplateCreate, TemplateOut

router = APIRouter(tags=["matter templates"])
cases_router = APIRouter(prefix="/cases", tags=["cases"])
admin_router = APIRouter(prefix="/matter-templates", tags=["matter templates"])

TemplateInPath = Annotated[MatterTemplate, Depends(in_path(service.get_template, "template_id"))]


def _location(template: MatterTemplate) -> str:
    return f"{CURRENT_PREFIX}/matter-templates/{quote(template.id)}/versions/{template.version}"


@cases_router.post("", response_model=Envelope[CaseOut | IdOnlyOut], status_code=201)
async def create_case(
    body: CaseOpen, principal: CasesWrite, session: SessionDep, runtime: RuntimeDep
) -> JSONResponse:
    """Create a case; `case_number` is assigned (`YYYY-NNNNNN`) when omitted, `access` defaults
    to the server's setting (`firm` unless configured). Emits `case.created`.

    With `template_id` (and optionally `template_version`; default the latest), the case takes the
    template's case type, defaults, custom-field values and tags where the body gives none, and
    gets its parties, saved deadlines (trigger dates from `trigger_dates` or the opening date) and
    tasks, and copies of its documents, all in one transaction with their events (`party.added`,
    `deadline.saved`, `task.created`, `document.uploaded`)."""
    case = await service.open_case(session, runtime, principal, body)
    return envelope.created(CaseOut.dump_for(case, principal))


@router.get("/matter-templates", response_model=PageEnvelope[TemplateOut])
async def list_templates(_: CasesRead, session: SessionDep) -> JSONResponse:
    """The latest version of every matter template (one page: a firm has tens)."""
    items = [TemplateOut.dump(t) for t in await service.list_templates(session)]
    return envelope.paginated(items, page=1, limit=max(len(items), 1), total=len(items))


@router.get("/matter-templates/{template_id}", response_model=Envelope[TemplateOut])
async def get_template(_: CasesRead, template: TemplateInPath) -> JSONResponse:
    """The latest version."""
    return envelope.ok(TemplateOut.dump(template))


@router.get("/matter-templates/{template_id}/versions/{version}", response_model=Envelope[TemplateOut])
async def get_template_version(
    _: CasesRead,
    template_id: str,
    version: Annotated[int, Path(ge=1, le=2**31 - 1)],
    session: SessionDep,
) -> JSONResponse:
    return envelope.ok(TemplateOut.dump(await service.get_template(session, template_id, version)))


@admin_router.post("", response_model=Envelope[TemplateOut], status_code=201)
async def create_template(body: TemplateCreate, admin: AdminPrincipal, session: SessionDep) -> JSONResponse:
    """Version 1 of a new template (409 when the id is taken). What it names (contacts, users,
    rule sets and their triggers) must exist."""
    template = await service.create_template(session, admin, body)
    return envelope.created(TemplateOut.dump(template), location=_location(template))


@admin_router.put("/{template_id}", response_model=Envelope[TemplateOut], status_code=201)
async def new_template_version(
    body: TemplateBody, admin: AdminPrincipal, template: TemplateInPath, session: SessionDep
) -> JSONResponse:
    """The template's next version; cases opened from earlier versions do not change."""
    created = await service.new_version(session, admin, template, body)
    return envelope.created(TemplateOut.dump(created), location=_location(created))
