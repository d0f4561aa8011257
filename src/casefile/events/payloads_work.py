"""The builders of the events of contacts, parties, conflict checks, notes, tasks and deadlines
(re-exported by `events.payloads`, where every emitter finds them)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from casefile.clock import format_timestamp, utcnow
from casefile.events.schemas import (
    ConflictCheckCompleted,
    ContactCreated,
    ContactDeleted,
    ContactUpdated,
    DeadlineDeleted,
    DeadlineFields,
    DeadlineMoved,
    DeadlineSaved,
    MovedTask,
    NoteCreated,
    NoteDeleted,
    NoteFields,
    NoteUpdated,
    PartyAdded,
    PartyFields,
    PartyRemoved,
    TaskCreated,
    TaskDeleted,
    TaskFields,
    TaskUpdated,
)

if TYPE_CHECKING:
    from casefile.models import ConflictCheck, Contact, Deadline, Note, Party, Task


def contact_created(contact: Contact) -> ContactCreated:
    return {
        "contact_id": contact.id,
        "kind": contact.kind,
        "name": contact.name,
        "aliases": contact.aliases,
        "tags": contact.tags,
        "created_by": contact.created_by,
        "created_at": format_timestamp(contact.created_at),
    }


def contact_updated(
    contact: Contact, changes: dict[str, dict[str, Any]], updated_by: str | None
) -> ContactUpdated:
    return {
        "contact_id": contact.id,
        "changes": changes,
        "updated_by": updated_by,
        "updated_at": format_timestamp(contact.updated_at),
    }


def contact_deleted(contact: Contact, deleted_by: str | None) -> ContactDeleted:
    return {
        "contact_id": contact.id,
        "name": contact.name,
        "deleted_by": deleted_by,
        "deleted_at": format_timestamp(utcnow()),
    }


def _party(party: Party) -> PartyFields:
    return {
        "party_id": party.id,
        "case_id": party.case_id,
        "contact_id": party.contact_id,
        "role": party.role,
    }


def party_added(party: Party, added_by: str | None) -> PartyAdded:
    return {
        **_party(party),
        "starts_on": party.starts_on.isoformat() if party.starts_on else None,
        "ends_on": party.ends_on.isoformat() if party.ends_on else None,
        "conflict_check_id": party.conflict_check_id,
        "added_by": added_by,
        "added_at": format_timestamp(party.created_at),
    }


def party_removed(party: Party, removed_by: str | None) -> PartyRemoved:
    return {**_party(party), "removed_by": removed_by, "removed_at": format_timestamp(utcnow())}


def conflict_check_completed(check: ConflictCheck) -> ConflictCheckCompleted:
    """How many hits and on which cases, never the names found: a receiver may not be allowed to
    see every matter (an ethical wall); it fetches the check to see what it may."""
    return {
        "conflict_check_id": check.id,
        "case_id": check.case_id,
        "names": check.names,
        "hit_count": len(check.hits),
        "created_by": check.created_by,
        "created_at": format_timestamp(check.created_at),
    }


def _note(note: Note) -> NoteFields:
    """A note's body may be privileged: events carry what it is attached to, never its text."""
    return {
        "note_id": note.id,
        "case_id": note.case_id,
        "contact_id": note.contact_id,
        "author_id": note.author_id,
        "format": note.format,
        "pinned": note.pinned,
    }


def note_created(note: Note) -> NoteCreated:
    return {**_note(note), "version": note.version, "created_at": format_timestamp(note.created_at)}


def note_updated(note: Note, changed: list[str], updated_by: str | None) -> NoteUpdated:
    return {
        **_note(note),
        "version": note.version,
        "changed": changed,
        "updated_by": updated_by,
        "updated_at": format_timestamp(note.updated_at),
    }


def note_deleted(note: Note, deleted_by: str | None) -> NoteDeleted:
    return {**_note(note), "deleted_by": deleted_by, "deleted_at": format_timestamp(utcnow())}


def _task(task: Task) -> TaskFields:
    return {
        "task_id": task.id,
        "case_id": task.case_id,
        "title": task.title,
        "assignee_id": task.assignee_id,
        "due_at": task.due_at,
        "priority": task.priority,
        "status": task.status,
        "deadline_id": task.deadline_id,
        "rule_id": task.rule_id,
    }


def task_created(task: Task) -> TaskCreated:
    return {**_task(task), "created_by": task.created_by, "created_at": format_timestamp(task.created_at)}


def task_updated(task: Task, changes: dict[str, dict[str, Any]], updated_by: str | None) -> TaskUpdated:
    return {
        **_task(task),
        "changes": changes,
        "updated_by": updated_by,
        "updated_at": format_timestamp(task.updated_at),
    }


def task_deleted(task: Task, deleted_by: str | None) -> TaskDeleted:
    return {**_task(task), "deleted_by": deleted_by, "deleted_at": format_timestamp(utcnow())}


def _deadline(deadline: Deadline) -> DeadlineFields:
    return {
        "deadline_id": deadline.id,
        "case_id": deadline.case_id,
        "rule_set": deadline.rule_set,
        "rule_set_version": deadline.rule_set_version,
        "trigger": deadline.trigger,
        "trigger_date": deadline.trigger_date.isoformat(),
    }


def deadline_saved(deadline: Deadline, tasks: list[Task], saved_by: str | None) -> DeadlineSaved:
    return {
        **_deadline(deadline),
        "tasks": [{"task_id": t.id, "rule_id": t.rule_id, "due_at": t.due_at} for t in tasks],
        "saved_by": saved_by,
    }


def deadline_moved(
    deadline: Deadline, old_date: str, moved: list[MovedTask], moved_by: str | None
) -> DeadlineMoved:
    """`moved`: `{task_id, rule_id, from, to}` for each task whose due date changed."""
    return {**_deadline(deadline), "from": old_date, "tasks": moved, "moved_by": moved_by}


def deadline_deleted(deadline: Deadline, task_ids: list[str], deleted_by: str | None) -> DeadlineDeleted:
    """`task_ids`: the open tasks deleted with it (done and cancelled ones stay)."""
    return {**_deadline(deadline), "deleted_tasks": task_ids, "deleted_by": deleted_by}
