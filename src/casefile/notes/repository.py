"""The notes queries: how they are listed (`ListSpec`), searched and filtered."""

from __future__ import annotations

from sqlalchemy import ColumnElement, and_, func
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.listing import ListSpec, projectable
from casefile.models import Note, NoteVersion
from casefile.notes.schemas import FORMATS, NoteOut, NoteVersionOut


async def _search_notes(session: AsyncSession, words: list[str]) -> ColumnElement[bool]:
    # Within one case's or contact's notes: a substring match per word is enough.
    return and_(*(func.lower(Note.body).like(f"%{w}%") for w in words))


def _pinned(session: AsyncSession, values: list[str]) -> ColumnElement[bool]:
    return Note.pinned.in_([v == "true" for v in values])


NOTE_LIST = ListSpec(
    model=Note,
    sortable={"created_at": Note.created_at, "updated_at": Note.updated_at},
    default_sort="created_at",
    tiebreak=Note.id,
    output_fields=projectable(NoteOut),
    filters={"pinned": _pinned, "format": Note.format, "author_id": Note.author_id},
    filter_choices={"pinned": ("true", "false"), "format": FORMATS},
    search=_search_notes,
)


HISTORY_LIST = ListSpec(
    model=NoteVersion,
    sortable={"version": NoteVersion.version},
    default_sort="version",
    tiebreak=NoteVersion.id,
    output_fields=projectable(NoteVersionOut),
)
