"""Custom field definitions: read by every signed-in caller (`/custom-fields`,
`/custom-field-sets`), changed by administrators (`/admin/...`, `admin_router`)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from fastapi.responses import JSONResponse

from casefile import envelope
from casefile.auth.dependencies import AdminPrincipal, CurrentPrincipal
from casefile.customfields import definitions, repository
from casefile.customfields.schemas import (
    Entity,
    FieldCreate,
    FieldOut,
    FieldSetCreate,
    FieldSetOut,
    FieldSetUpdate,
    FieldUpdate,
)
from casefile.envelope import Envelope, PageEnvelope
from casefile.models import CustomField, CustomFieldSet
from casefile.request_scope import SessionDep, in_path

router = APIRouter(tags=["custom fields"])
admin_router = APIRouter(tags=["custom fields"])

FieldInPath = Annotated[CustomField, Depends(in_path(definitions.get_field, "field_id"))]
SetInPath = Annotated[CustomFieldSet, Depends(in_path(definitions.get_field_set, "set_id"))]
EntityParam = Annotated[Entity, Query(description="Fields of cases or of contacts")]


def _whole(items: list[dict[str, object]]) -> JSONResponse:
    # A firm has tens of fields: the list comes whole, as one page.
    return envelope.paginated(items, page=1, limit=max(len(items), 1), total=len(items))


@router.get("/custom-fields", response_model=PageEnvelope[FieldOut])
async def list_fields(_: CurrentPrincipal, session: SessionDep, entity: EntityParam = "case") -> JSONResponse:
    """The custom fields of cases (or `entity=contact`), in their order: what `custom_fields`
    holds, what `cf.<name>=` filters and `sort=cf.<name>` sorts."""
    return _whole([FieldOut.dump(f) for f in await repository.fields_of(session, entity)])


@router.get("/custom-fields/{field_id}", response_model=Envelope[FieldOut])
async def get_field(_: CurrentPrincipal, field: FieldInPath) -> JSONResponse:
    return envelope.ok(FieldOut.dump(field))


@router.get("/custom-field-sets", response_model=PageEnvelope[FieldSetOut])
async def list_field_sets(
    _: CurrentPrincipal, session: SessionDep, entity: EntityParam = "case"
) -> JSONResponse:
    """Field sets: the fields shown together, each set applying to the case types it lists."""
    return _whole([FieldSetOut.dump(s) for s in await repository.sets_of(session, entity)])


@router.get("/custom-field-sets/{set_id}", response_model=Envelope[FieldSetOut])
async def get_field_set(_: CurrentPrincipal, field_set: SetInPath) -> JSONResponse:
    return envelope.ok(FieldSetOut.dump(field_set))


@admin_router.post("/custom-fields", response_model=Envelope[FieldOut], status_code=201)
async def create_field(body: FieldCreate, admin: AdminPrincipal, session: SessionDep) -> JSONResponse:
    """Define a field: its `name` (the key in `custom_fields`), type and entity never change; 409
    when the name is taken. Emits `custom_field.created`."""
    return envelope.created(FieldOut.dump(await definitions.create_field(session, admin, body)))


@admin_router.patch("/custom-fields/{field_id}", response_model=Envelope[FieldOut])
async def update_field(
    body: FieldUpdate, admin: AdminPrincipal, field: FieldInPath, session: SessionDep
) -> JSONResponse:
    """Change a field's label, requirement, default, choices, set or position; stored values
    stay as they are. Emits `custom_field.updated`."""
    return envelope.ok(FieldOut.dump(await definitions.update_field(session, admin, field, body)))


@admin_router.post("/custom-field-sets", response_model=Envelope[FieldSetOut], status_code=201)
async def create_field_set(body: FieldSetCreate, admin: AdminPrincipal, session: SessionDep) -> JSONResponse:
    """A set of fields, applying to the case types listed (none: every case). Emits
    `custom_field_set.created`."""
    return envelope.created(FieldSetOut.dump(await definitions.create_field_set(session, admin, body)))


@admin_router.patch("/custom-field-sets/{set_id}", response_model=Envelope[FieldSetOut])
async def update_field_set(
    body: FieldSetUpdate, admin: AdminPrincipal, field_set: SetInPath, session: SessionDep
) -> JSONResponse:
    """Rename a set, change its case types or position. Emits `custom_field_set.updated`."""
    return envelope.ok(FieldSetOut.dump(await definitions.update_field_set(session, admin, field_set, body)))
