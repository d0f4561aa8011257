from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from casefile import envelope
from casefile.access.dependencies import CasesRead, CasesWrite
from casefile.access.matter import Level, case_for
from casefile.access.visibility import IdOnlyOut
from casefile.contacts import repository, service
from casefile.contacts.dependencies import ContactInPath, ContactsDelete, ContactsRead, ContactsWrite
from casefile.contacts.repository import CONTACT_LIST, PARTY_LIST
from casefile.contacts.schemas import ContactCreate, ContactOut, ContactUpdate, PartyCreate, PartyOut
from casefile.envelope import DeletedOut, Envelope, PageEnvelope
from casefile.listing import CUSTOM_PREFIX, ListQuery, Projection, fields_query, list_query, project
from casefile.query_parameters import query_prefix
from casefile.request_scope import SessionDep

router = APIRouter(tags=["contacts"])

ContactListQuery = Annotated[ListQuery, Depends(list_query(CONTACT_LIST))]
ContactFields = Annotated[Projection | None, Depends(fields_query(CONTACT_LIST.output_fields))]
PartyListQuery = Annotated[ListQuery, Depends(list_query(PARTY_LIST))]

# A handler with a body or a query string loads its path's row itself: see auth.dependencies.


@router.get("/contacts", response_model=PageEnvelope[ContactOut])
@query_prefix(CUSTOM_PREFIX)
async def list_contacts(
    principal: ContactsRead, session: SessionDep, query: ContactListQuery
) -> JSONResponse:
    """List contacts: paginated, sortable (`created_at`, `updated_at`, `name`, `cf.<name>`),
    filters `kind`, `tags` and `cf.<name>` (custom fields), `search` over names and aliases
    (ignoring case, accents and punctuation)."""
    await service.check_projection(session, query.fields)
    return envelope.listed(
        await service.list_contacts(session, query), query, lambda c: ContactOut.dump_for(c, principal)
    )


@router.post("/contacts", response_model=Envelope[ContactOut | IdOnlyOut], status_code=201)
async def create_contact(body: ContactCreate, principal: ContactsWrite, session: SessionDep) -> JSONResponse:
    """Create a contact (a person or an organization). Emits `contact.created`."""
    contact = await service.create_contact(session, principal, body)
    return envelope.created(ContactOut.dump_for(contact, principal))


@router.get("/contacts/{contact_id}", response_model=Envelope[ContactOut])
async def get_contact(
    principal: ContactsRead, fields: ContactFields, contact: ContactInPath, session: SessionDep
) -> JSONResponse:
    await service.check_projection(session, fields)
    return envelope.ok(project(ContactOut.dump_for(contact, principal), fields))


@router.patch("/contacts/{contact_id}", response_model=Envelope[ContactOut | IdOnlyOut])
async def update_contact(
    contact_id: str, body: ContactUpdate, principal: ContactsWrite, session: SessionDep
) -> JSONResponse:
    """Update any subset of the writable fields. Emits `contact.updated`."""
    contact = await repository.get_contact(session, contact_id)
    updated = await service.update_contact(session, principal, contact, body)
    return envelope.ok(ContactOut.dump_for(updated, principal))


@router.delete("/contacts/{contact_id}", response_model=Envelope[DeletedOut])
async def delete_contact(
    principal: ContactsDelete, contact: ContactInPath, session: SessionDep
) -> JSONResponse:
    """Delete a contact and its notes; 409 CONFLICT while it is a party of a case. Emits
    `contact.deleted`."""
    await service.delete_contact(session, principal, contact)
    return envelope.deleted(contact.id)


@router.get("/cases/{case_id}/parties", response_model=PageEnvelope[PartyOut])
async def list_parties(
    case_id: str, principal: CasesRead, session: SessionDep, query: PartyListQuery
) -> JSONResponse:
    """A case's parties: filters `role` and `contact_id`, `search` over the contacts' names."""
    case = await case_for(session, principal, case_id)
    return envelope.listed(await service.list_parties(session, case, query), query, PartyOut.dump)


@router.post("/cases/{case_id}/parties", response_model=Envelope[PartyOut], status_code=201)
async def add_party(
    case_id: str, body: PartyCreate, principal: CasesWrite, session: SessionDep
) -> JSONResponse:
    """Link a contact to the case with a role. An `adverse_party` runs a conflict check on the
    contact's names at once (`conflict_check_id`). Emits `party.added` (and
    `conflict_check.completed`)."""
    case = await case_for(session, principal, case_id, Level.WRITE)
    return envelope.created(PartyOut.dump(await service.add_party(session, principal, case, body)))


@router.delete("/cases/{case_id}/parties/{party_id}", response_model=Envelope[DeletedOut])
async def remove_party(
    case_id: str, party_id: str, principal: CasesWrite, session: SessionDep
) -> JSONResponse:
    """Remove a party from the case (the contact stays). Emits `party.removed`."""
    case = await case_for(session, principal, case_id, Level.WRITE)
    await service.remove_party(session, principal, case, party_id)
    return envelope.deleted(party_id)
