"""Note rules: notes on cases and on contacts, their edit history, and who may read or change them.

A note on a case follows the case: its case's access rules (`cases.access.case_for`: a note on a
case the caller may not see is 404, like the case) and the permissions on cases. A note on a
contact needs the permissions on contacts. Every version is kept in `note_versions`.
"""

from __future__ import annotations

from typing import Any, Literal

from sqlalchemy.ext.asyncio import AsyncSession

from casefile.access.holds import ensure_no_hold
from casefile.access.matter import Level, case_for, require_level
from casefile.audit import service as audit
from casefile.auth.permissions import Permission, Principal
from casefile.clock import utcnow
from casefile.db import get_or_404
from casefile.errors import ValidationFailed, permission_missing
from casefile.events import payloads
from casefile.events.outbox import emit
from casefile.listing import ListQuery, Page, fetch_page
from casefile.models import Case, Contact, Note, NoteVersion
from casefile.notes.repository import HISTORY_LIST, NOTE_LIST
from casefile.notes.schemas import BODY_REQUIRED, NoteCreate, NoteUpdate

Action = Literal["read", "write", "delete"]
_CASE_PERMISSIONS = {
    "read": Permission.READ_CASES,
    "write": Permission.WRITE_CASES,
    "delete": Permission.DELETE_CASES,
}
_CONTACT_PERMISSIONS = {
    "read": Permission.READ_CONTACTS,
    "write": Permission.WRITE_CONTACTS,
    "delete": Permission.DELETE_CONTACTS,
}


async def list_case_notes(session: AsyncSession, case: Case, query: ListQuery) -> Page[Note]:
    page = await fetch_page(session, NOTE_LIST, query, conditions=[Note.case_id == case.id])
    await audit.record_read(session, "note.list", resource_type="case", resource_id=case.id, case_id=case.id)
    return page


async def list_contact_notes(session: AsyncSession, contact: Contact, query: ListQuery) -> Page[Note]:
    page = await fetch_page(session, NOTE_LIST, query, conditions=[Note.contact_id == contact.id])
    await audit.record_read(session, "note.list", resource_type="contact", resource_id=contact.id)
    return page


async def read_note(session: AsyncSession, principal: Principal, note_id: str) -> Note:
    """`GET /notes/{id}`: the note (as `note_for` lets the caller see it), recorded as read."""
    note = await note_for(session, principal, note_id, "read")
    await audit.record_read(
        session, "note.read", resource_type="note", resource_id=note.id, case_id=note.case_id
    )
    return note


def _version(note: Note, actor: Principal) -> NoteVersion:
    return NoteVersion(
        note_id=note.id,
        version=note.version,
        body=note.body,
        format=note.format,
        pinned=note.pinned,
        edited_by=actor.user_id,
        edited_at=note.updated_at,
    )


async def create_note(
    session: AsyncSession,
    actor: Principal,
    body: NoteCreate,
    *,
    case: Case | None = None,
    contact: Contact | None = None,
) -> Note:
    """A note on `case` (loaded with `write` for the caller) or on `contact`."""
    if not body.body or not body.body.strip():
        raise ValidationFailed.on("body", BODY_REQUIRED)
    now = utcnow()
    note = Note(
        case_id=case.id if case else None,
        contact_id=contact.id if contact else None,
        # The user behind the call (an API key's creator), as a document's uploaded_by.
        author_id=actor.user_id,
        body=body.body,
        format=body.format,
        pinned=body.pinned,
        version=1,
        created_at=now,
        updated_at=now,
    )
    session.add(note)
    await session.flush()
    session.add(_version(note, actor))
    await session.flush()
    await emit(session, "note.created", payloads.note_created(note))
    return note


async def note_for(session: AsyncSession, principal: Principal, note_id: str, action: Action) -> Note:
    """The note, if `principal` may see it (else 404) and may do `action` on it (else 403)."""
    note = await get_or_404(session, Note, note_id, "Note not found")
    if note.case_id is None:
        needed = _CONTACT_PERMISSIONS[action]
        if not principal.can(needed):
            raise permission_missing(needed)
        return note
    # A note on a case the caller may not see does not exist for them; then the permission, then
    # the right on the case a change needs (the order of every case path).
    case = await case_for(session, principal, note.case_id, not_found="Note not found")
    needed = _CASE_PERMISSIONS[action]
    if not principal.can(needed):
        raise permission_missing(needed)
    if action != "read":
        await require_level(session, principal, case, Level.WRITE)
    return note


async def update_note(session: AsyncSession, actor: Principal, note: Note, body: NoteUpdate) -> Note:
    if note.case_id is not None:
        await ensure_no_hold(session, note.case_id, "changing its notes")
    values = body.model_dump(exclude_unset=True)
    if "body" in values and (values["body"] is None or not values["body"].strip()):
        raise ValidationFailed.on("body", BODY_REQUIRED)
    for name in ("format", "pinned"):
        if name in values and values[name] is None:
            raise ValidationFailed.on(name, f"{name} cannot be null")
    changes: dict[str, dict[str, Any]] = {
        name: {"from": getattr(note, name), "to": value}
        for name, value in values.items()
        if getattr(note, name) != value
    }
    if not changes:
        return note
    for name, change in changes.items():
        setattr(note, name, change["to"])
    note.version += 1
    note.updated_at = utcnow()
    session.add(_version(note, actor))
    await session.flush()
    # The body may hold privileged content: events name the fields that changed, not their text.
    await emit(session, "note.updated", payloads.note_updated(note, sorted(changes), actor.actor_id))
    return note


async def delete_note(session: AsyncSession, actor: Principal, note: Note) -> None:
    if note.case_id is not None:  # the note and its history are part of the held record
        await ensure_no_hold(session, note.case_id, "deleting its notes")
    await emit(session, "note.deleted", payloads.note_deleted(note, actor.actor_id))
    await session.delete(note)
    await session.flush()


async def history(session: AsyncSession, note: Note, query: ListQuery) -> Page[NoteVersion]:
    page = await fetch_page(session, HISTORY_LIST, query, conditions=[NoteVersion.note_id == note.id])
    await audit.record_read(
        session, "note.history", resource_type="note", resource_id=note.id, case_id=note.case_id
    )
    return page
