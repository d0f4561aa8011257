"""Contact and party queries: lookups, and how their lists are searched, filtered and sorted."""

from __future__ import annotations

from sqlalchemy import ColumnElement, and_, bindparam, exists, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.contacts.schemas import KINDS, ROLES, ContactOut, PartyOut
from casefile.db import dialect_name, get_or_404
from casefile.listing import ListSpec, any_of_ignoring_case, projectable
from casefile.models import Contact, ContactName, Party
from casefile.nlp.name_keys import name_key, name_words


async def get_contact(session: AsyncSession, contact_id: str) -> Contact:
    return await get_or_404(session, Contact, contact_id, "Contact not found")


async def get_party(session: AsyncSession, party_id: str) -> Party:
    return await get_or_404(session, Party, party_id, "Party not found")


def names_matching(contact_id: ColumnElement[str], words: list[str]) -> ColumnElement[bool]:
    """Some name or alias of the contact holds every word, as typed (ignoring case) or as its
    matching key has it (without accents or punctuation: "muller" finds "Müller", "roadrunner"
    finds "Road-Runner")."""
    per_word = []
    for word in words:
        folded = "".join(name_words(word)) or word
        per_word.append(
            or_(func.lower(ContactName.name).like(f"%{word}%"), ContactName.key.like(f"%{folded}%"))
        )
    return exists().where(ContactName.contact_id == contact_id, *per_word)


async def _search_contacts(session: AsyncSession, words: list[str]) -> ColumnElement[bool]:
    return names_matching(Contact.id, words)  # type: ignore[arg-type]


def _having_any_tag(session: AsyncSession, tags: list[str]) -> ColumnElement[bool]:
    """Contacts with at least one of `tags`, ignoring case (as documents' `tags` filter)."""
    unnest = func.json_array_elements_text if dialect_name(session) == "postgresql" else func.json_each
    elements = unnest(Contact.tags).table_valued("value")
    return exists().where(any_of_ignoring_case(elements.c.value, tags))


CONTACT_LIST = ListSpec(
    model=Contact,
    sortable={
        "created_at": Contact.created_at,
        "updated_at": Contact.updated_at,
        "name": func.lower(Contact.name),
    },
    default_sort="created_at",
    tiebreak=Contact.id,
    output_fields=projectable(ContactOut),
    filters={"kind": Contact.kind, "tags": _having_any_tag},
    filter_choices={"kind": KINDS},
    search=_search_contacts,
    custom_fields=True,
)


async def _search_parties(session: AsyncSession, words: list[str]) -> ColumnElement[bool]:
    return names_matching(Party.contact_id, words)  # type: ignore[arg-type]


PARTY_LIST = ListSpec(
    model=Party,
    sortable={"created_at": Party.created_at, "role": Party.role},
    default_sort="created_at",
    tiebreak=Party.id,
    output_fields=projectable(PartyOut),
    filters={"role": Party.role, "contact_id": Party.contact_id},
    filter_choices={"role": ROLES},
    search=_search_parties,
)


# Built once: building the statement costs more than running it (a new case's client is looked up).
_CONTACT_ID_WITH_KEY = (
    select(Contact.id)
    .join(ContactName, and_(ContactName.contact_id == Contact.id, ContactName.source == "contact"))
    .where(ContactName.key == bindparam("key"))
    .order_by(Contact.created_at, Contact.id)
    .limit(1)
)


async def contact_id_with_key(session: AsyncSession, key: str) -> str | None:
    """The id of the oldest contact whose own name (not an alias) has the matching key `key`."""
    found: str | None = await session.scalar(_CONTACT_ID_WITH_KEY, {"key": key})
    return found


def contact_names(contact: Contact) -> list[ContactName]:
    """The rows of `contact_names` for the contact's name and aliases, keys computed."""
    named = [("contact", contact.name), *(("alias", alias) for alias in contact.aliases)]
    rows = []
    for source, name in named:
        key = name_key(name)
        rows.append(ContactName(source=source, name=name, key=key, key_length=len(key)))
    return rows


async def case_ids_with_contact(session: AsyncSession, contact_id: str) -> list[str]:
    return list(await session.scalars(select(Party.case_id).where(Party.contact_id == contact_id)))
