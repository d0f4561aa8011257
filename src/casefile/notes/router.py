from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from casefile import envelope
from casefile.access.dependencies import CasesRead, CasesWrite
from casefile.access.matter import Level, case_for
from casefile.auth.dependencies import CurrentPrincipal
from casefile.contacts.dependencies import ContactsRead, ContactsWrite
from casefile.contacts.repository import get_contact
from casefile.envelope import DeletedOut, Envelope, PageEnvelope
from casefile.listing import ListQuery, Projection, fields_query, list_query, project
from casefile.notes import service
from casefile.notes.repository import HISTORY_LIST, NOTE_LIST
from casefile.notes.schemas import NoteCreate, NoteOut, NoteUpdate, NoteVersionOut
from casefile.request_scope import SessionDep

router = APIRouter(tags=["notes"])

NoteListQuery = Annotated[ListQuery, Depends(list_query(NOTE_LIST))]
NoteFields = Annotated[Projection | None, Depends(fields_query(NOTE_LIST.output_fields))]
HistoryQuery = Annotated[ListQuery, Depends(list_query(HISTORY_LIST))]


@router.get("/cases/{case_id}/notes", response_model=PageEnvelope[NoteOut])
async def list_case_notes(
    case_id: str, principal: CasesRead, session: SessionDep, query: NoteListQuery
) -> JSONResponse:
    """A case's notes: filters `pinned`, `format`, `author_id`; `search` in the body."""
    case = await case_for(session, principal, case_id)
    return envelope.listed(await service.list_case_notes(session, case, query), query, NoteOut.dump)


@router.post("/cases/{case_id}/notes", response_model=Envelope[NoteOut], status_code=201)
async def add_case_note(
    case_id: str, body: NoteCreate, principal: CasesWrite, session: SessionDep
) -> JSONResponse:
    """Add a note (plain text or Markdown, stored as given) to the case. Emits `note.created`."""
    case = await case_for(session, principal, case_id, Level.WRITE)
    return envelope.created(NoteOut.dump(await service.create_note(session, principal, body, case=case)))


@router.get("/contacts/{contact_id}/notes", response_model=PageEnvelope[NoteOut])
async def list_contact_notes(
    contact_id: str, _: ContactsRead, session: SessionDep, query: NoteListQuery
) -> JSONResponse:
    """A contact's notes: filters `pinned`, `format`, `author_id`; `search` in the body."""
    contact = await get_contact(session, contact_id)
    return envelope.listed(await service.list_contact_notes(session, contact, query), query, NoteOut.dump)


@router.post("/contacts/{contact_id}/notes", response_model=Envelope[NoteOut], status_code=201)
async def add_contact_note(
    contact_id: str, body: NoteCreate, principal: ContactsWrite, session: SessionDep
) -> JSONResponse:
    """Add a note to the contact. Emits `note.created`."""
    contact = await get_contact(session, contact_id)
    return envelope.created(
        NoteOut.dump(await service.create_note(session, principal, body, contact=contact))
    )


@router.get("/notes/{note_id}", response_model=Envelope[NoteOut])
async def get_note(
    note_id: str, principal: CurrentPrincipal, fields: NoteFields, session: SessionDep
) -> JSONResponse:
    """A note: on a case, needs `read:cases` and a case the caller may see; on a contact, `read:contacts`."""
    note = await service.read_note(session, principal, note_id)
    return envelope.ok(project(NoteOut.dump(note), fields))


@router.patch("/notes/{note_id}", response_model=Envelope[NoteOut])
async def update_note(
    note_id: str, body: NoteUpdate, principal: CurrentPrincipal, session: SessionDep
) -> JSONResponse:
    """Change the body, format or pinned flag; the previous version stays in the history. Emits
    `note.updated`."""
    note = await service.note_for(session, principal, note_id, "write")
    return envelope.ok(NoteOut.dump(await service.update_note(session, principal, note, body)))


@router.delete("/notes/{note_id}", response_model=Envelope[DeletedOut])
async def delete_note(note_id: str, principal: CurrentPrincipal, session: SessionDep) -> JSONResponse:
    """Delete the note and its history. Emits `note.deleted`."""
    note = await service.note_for(session, principal, note_id, "delete")
    await service.delete_note(session, principal, note)
    return envelope.deleted(note.id)


@router.get("/notes/{note_id}/history", response_model=PageEnvelope[NoteVersionOut])
async def note_history(
    note_id: str, principal: CurrentPrincipal, session: SessionDep, query: HistoryQuery
) -> JSONResponse:
    """Every version of the note, the first included (newest first by default)."""
    note = await service.note_for(session, principal, note_id, "read")
    return envelope.listed(await service.history(session, note, query), query, NoteVersionOut.dump)
