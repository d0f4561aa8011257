"""Contact and party rules: a contact's names kept searchable, parties linked to cases through the
case's access rules, the automatic conflict check on an adverse party, the client party of a new
case, and the events each change emits."""

from __future__ import annotations

from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.access.holds import ensure_no_hold
from casefile.audit import service as audit
from casefile.auth.permissions import Principal
from casefile.clock import new_id, utcnow
from casefile.conflicts import service as conflicts
from casefile.contacts import repository
from casefile.contacts.repository import CONTACT_LIST, PARTY_LIST
from casefile.contacts.schemas import NAME_REQUIRED, ContactCreate, ContactUpdate, PartyCreate
from casefile.customfields import service as custom_fields
from casefile.db import referenced
from casefile.errors import Conflict, NotFound, ValidationFailed
from casefile.events import payloads
from casefile.events.outbox import emit
from casefile.listing import ListQuery, Page, Projection, fetch_page
from casefile.models import Case, Contact, Party
from casefile.nlp.name_keys import has_legal_form, name_key


async def list_contacts(session: AsyncSession, query: ListQuery) -> Page[Contact]:
    spec, conditions, _ = await custom_fields.for_list(session, "contact", Contact.id, CONTACT_LIST, query)
    return await fetch_page(session, spec, query, conditions=conditions, match_once=bool(conditions))


async def check_projection(session: AsyncSession, fields: Projection | None) -> None:
    """`fields=custom_fields{a,b}`: 422 unless each is a contact field."""
    await custom_fields.check_fields(session, "contact", fields)


# A list or mapping given as null, or not given at creation, is empty.
_EMPTY: dict[str, Any] = {
    "aliases": [],
    "emails": [],
    "phones": [],
    "addresses": [],
    "tags": [],
    "identifiers": {},
}


def _values(body: ContactCreate | ContactUpdate, *, exclude_unset: bool) -> dict[str, Any]:
    values = body.model_dump(exclude_unset=exclude_unset)
    for name, empty in _EMPTY.items():
        if name in values and values[name] is None:
            values[name] = type(empty)()
    if "addresses" in values:  # only the parts given
        values["addresses"] = [{k: v for k, v in a.items() if v is not None} for a in values["addresses"]]
    return values


async def _insert_contact(session: AsyncSession, actor: Principal, contact: Contact) -> Contact:
    contact.names = repository.contact_names(contact)
    session.add(contact)
    await session.flush()
    await emit(session, "contact.created", payloads.contact_created(contact))
    return contact


async def create_contact(session: AsyncSession, actor: Principal, body: ContactCreate) -> Contact:
    if not body.name:
        raise ValidationFailed.on("name", NAME_REQUIRED)
    now = utcnow()
    values = _values(body, exclude_unset=False)
    defs = await custom_fields.definitions(session, "contact")
    given = values.pop("custom_fields", None)
    prepared = await custom_fields.prepare(session, defs, None, given, case_type=None, creating=True)
    contact = Contact(
        **values, custom_fields=prepared.values, created_by=actor.actor_id, created_at=now, updated_at=now
    )
    await _insert_contact(session, actor, contact)
    await custom_fields.store(session, defs, contact.id, prepared, case_created_at=None)
    return contact


async def update_contact(
    session: AsyncSession, actor: Principal, contact: Contact, body: ContactUpdate
) -> Contact:
    values = _values(body, exclude_unset=True)
    if "name" in values and not values["name"]:
        raise ValidationFailed.on("name", NAME_REQUIRED)
    if "kind" in values and values["kind"] is None:
        raise ValidationFailed.on("kind", "kind cannot be null")
    given = values.pop("custom_fields", None)
    changes: dict[str, dict[str, Any]] = {
        name: {"from": getattr(contact, name), "to": value}
        for name, value in values.items()
        if getattr(contact, name) != value
    }
    if given is not None:
        defs = await custom_fields.definitions(session, "contact")
        prepared = await custom_fields.prepare(
            session, defs, contact.custom_fields, given, case_type=None, creating=False
        )
        contact.custom_fields = prepared.values
        await custom_fields.store(session, defs, contact.id, prepared, case_created_at=None)
        changes.update({f"custom_fields.{n}": change for n, change in prepared.changes.items()})
    if not changes:
        return contact
    for name, change in changes.items():
        if not name.startswith("custom_fields."):
            setattr(contact, name, change["to"])
    if "name" in changes or "aliases" in changes:
        contact.names = repository.contact_names(contact)
    contact.updated_at = utcnow()
    await session.flush()
    await emit(session, "contact.updated", payloads.contact_updated(contact, changes, actor.actor_id))
    return contact


async def delete_contact(session: AsyncSession, actor: Principal, contact: Contact) -> None:
    """Delete a contact that is no case's party: a party is part of a matter's record (and of its
    conflict checks), so it is removed from the case first."""
    if await repository.case_ids_with_contact(session, contact.id):
        raise Conflict("The contact is a party of a case; remove it from its cases first")
    await emit(session, "contact.deleted", payloads.contact_deleted(contact, actor.actor_id))
    await session.delete(contact)
    await session.flush()


async def list_parties(session: AsyncSession, case: Case, query: ListQuery) -> Page[Party]:
    page = await fetch_page(session, PARTY_LIST, query, conditions=[Party.case_id == case.id])
    await audit.record_read(session, "party.list", resource_type="case", resource_id=case.id, case_id=case.id)
    return page


async def _insert_party(session: AsyncSession, party: Party) -> None:
    """Insert inside a savepoint: the unique (case, contact, role) index decides duplicates."""
    try:
        async with session.begin_nested():
            session.add(party)
            await session.flush()
    except IntegrityError as exc:
        raise Conflict("The contact already has this role in the case") from exc


async def add_party(session: AsyncSession, actor: Principal, case: Case, body: PartyCreate) -> Party:
    """`case`: loaded with `write` for the caller (`access.matter.case_for`)."""
    contact = await referenced(session, Contact, body.contact_id, "contact_id", "Contact not found")
    if body.starts_on and body.ends_on and body.ends_on < body.starts_on:
        raise ValidationFailed.on("ends_on", "ends_on is before starts_on")
    party = Party(**body.model_dump(), case_id=case.id, created_by=actor.actor_id, created_at=utcnow())
    party.contact = contact
    await _insert_party(session, party)
    if party.role == "adverse_party":
        # Acting against someone: does the firm act for them, or for someone like them, anywhere?
        check = await conflicts.run_check(
            session,
            actor,
            [contact.name, *contact.aliases],
            case_id=case.id,
            exclude_contact_id=contact.id,
            exclude_party_id=party.id,
        )
        party.conflict_check_id = check.id
        await session.flush()
    await emit(session, "party.added", payloads.party_added(party, actor.actor_id))
    return party


async def remove_party(session: AsyncSession, actor: Principal, case: Case, party_id: str) -> None:
    party = await repository.get_party(session, party_id)
    if party.case_id != case.id:
        raise NotFound("Party not found")
    await ensure_no_hold(session, case.id, "removing its parties")
    await emit(session, "party.removed", payloads.party_removed(party, actor.actor_id))
    await session.delete(party)
    await session.flush()


async def link_client(session: AsyncSession, actor: Principal, case: Case) -> None:
    """A new case with a `client_name` gets its client party: the contact whose own name has the
    same matching key (the oldest, if several), or a new contact of that name (an organisation if
    the name holds a legal form such as "Inc.", else a person). Done for the case's creator
    whatever their contact permissions: it is part of creating the case."""
    if not case.client_name:
        return
    contact_id = await repository.contact_id_with_key(session, name_key(case.client_name))
    if contact_id is None:
        now = utcnow()
        kind = "organization" if has_legal_form(case.client_name) else "person"
        empty = {name: type(value)() for name, value in _EMPTY.items()}
        contact = Contact(
            kind=kind,
            name=case.client_name,
            **empty,
            created_by=actor.actor_id,
            created_at=now,
            updated_at=now,
        )
        contact_id = (await _insert_contact(session, actor, contact)).id
    # Written with the transaction's next flush: nothing here reads it back.
    party = Party(
        id=new_id("pty"),
        case_id=case.id,
        contact_id=contact_id,
        role="client",
        created_by=actor.actor_id,
        created_at=utcnow(),
    )
    session.add(party)
    await emit(session, "party.added", payloads.party_added(party, actor.actor_id))
