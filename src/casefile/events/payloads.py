"""The builder of each event's `data` (the names are `events.catalogue`'s). Builders take domain
objects and return plain JSON-ready dicts, so a payload's shape is defined once, here, whoever
emits it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from casefile.clock import format_timestamp, utcnow

if TYPE_CHECKING:
    from casefile.models import (
        AiJob,
        Case,
        ConflictCheck,
        Contact,
        Deadline,
        Document,
        Group,
        LegalHold,
        Note,
        Party,
        Task,
        User,
    )


def _attributes(obj: object, *names: str) -> dict[str, Any]:
    """The payload fields that are the object's attributes under the same names."""
    return {name: getattr(obj, name) for name in names}


def case_created(case: Case) -> dict[str, Any]:
    return {
        "case_id": case.id,
        **_attributes(case, "title", "case_number", "case_type", "jurisdiction", "client_name"),
        **_attributes(case, "status", "priority", "created_by"),
        "custom_fields": dict(case.custom_fields or {}),
        "tags": list(case.tags or []),
        "template_id": case.template_id,
        "template_version": case.template_version,
        "created_at": format_timestamp(case.created_at),
    }


def case_updated(case: Case, changes: dict[str, dict[str, Any]], updated_by: str | None) -> dict[str, Any]:
    return {
        "case_id": case.id,
        "case_number": case.case_number,
        "changes": changes,
        "updated_by": updated_by,
        "updated_at": format_timestamp(case.updated_at),
    }


def case_status_changed(case: Case, old: str, new: str, changed_by: str | None) -> dict[str, Any]:
    return {"case_id": case.id, "from": old, "to": new, "changed_by": changed_by}


def case_assigned(case: Case, user_id: str, assigned_by: str | None) -> dict[str, Any]:
    return {
        "case_id": case.id,
        "user_id": user_id,
        "assigned_by": assigned_by,
        "assigned_to": case.assigned_to,
    }


def case_access_changed(
    case: Case, before: dict[str, Any], after: dict[str, Any], changed_by: str | None
) -> dict[str, Any]:
    return {"case_id": case.id, "from": before, "to": after, "changed_by": changed_by}


def group_changed(group: Group, changed_by: str | None) -> dict[str, Any]:
    return {
        "group_id": group.id,
        "name": group.name,
        "member_ids": group.member_ids,
        "changed_by": changed_by,
    }


def case_deleted(case: Case, deleted_by: str | None) -> dict[str, Any]:
    return {
        "case_id": case.id,
        "case_number": case.case_number,
        "deleted_by": deleted_by,
        "deleted_at": format_timestamp(utcnow()),
    }


def case_restored(case: Case, restored_by: str | None, document_ids: list[str]) -> dict[str, Any]:
    """`document_ids`: the documents that came back with it (those trashed with the case)."""
    return {
        "case_id": case.id,
        "case_number": case.case_number,
        "restored_by": restored_by,
        "document_ids": document_ids,
        "restored_at": format_timestamp(utcnow()),
    }


def case_purged(case: Case, purged_by: str | None, reason: str) -> dict[str, Any]:
    """`reason`: `purged` (DELETE /admin/trash/{id}) or `retention` (older than trash_days)."""
    return {
        "case_id": case.id,
        "case_number": case.case_number,
        "purged_by": purged_by,
        "reason": reason,
        "purged_at": format_timestamp(utcnow()),
    }


def _hold(hold: LegalHold) -> dict[str, Any]:
    return {"hold_id": hold.id, "case_id": hold.case_id, "reason": hold.reason}


def case_hold_placed(hold: LegalHold) -> dict[str, Any]:
    return {**_hold(hold), "placed_by": hold.created_by, "placed_at": format_timestamp(hold.created_at)}


def case_hold_released(hold: LegalHold) -> dict[str, Any]:
    released_at = format_timestamp(hold.released_at) if hold.released_at else None
    return {**_hold(hold), "released_by": hold.released_by, "released_at": released_at}


def user_login(user: User, method: str) -> dict[str, Any]:
    return {"user_id": user.id, "email": user.email, "method": method, "at": format_timestamp(utcnow())}


def user_logout(user: User) -> dict[str, Any]:
    return {"user_id": user.id, "email": user.email, "at": format_timestamp(utcnow())}


def user_permissions_changed(
    user: User, changes: dict[str, dict[str, Any]], changed_by: str | None
) -> dict[str, Any]:
    return {"user_id": user.id, "email": user.email, "changes": changes, "changed_by": changed_by}


def document_uploaded(document: Document) -> dict[str, Any]:
    return {
        "document_id": document.id,
        **_attributes(document, "case_id", "title", "document_type", "tags", "description"),
        **_attributes(document, "file_size", "file_type", "uploaded_by", "uploaded_via_key"),
        "uploaded_at": format_timestamp(document.uploaded_at),
    }


def document_updated(
    document: Document, changes: dict[str, dict[str, Any]], updated_by: str | None
) -> dict[str, Any]:
    return {
        "document_id": document.id,
        "case_id": document.case_id,
        "changes": changes,
        "updated_by": updated_by,
        "updated_at": format_timestamp(document.updated_at),
    }


def document_deleted(document: Document, deleted_by: str | None, reason: str) -> dict[str, Any]:
    return {
        "document_id": document.id,
        "case_id": document.case_id,
        "title": document.title,
        "sha256": document.sha256,
        "deleted_by": deleted_by,
        "reason": reason,
        "deleted_at": format_timestamp(utcnow()),
    }


def document_restored(document: Document, restored_by: str | None, reason: str) -> dict[str, Any]:
    """`reason`: `restored` (on its own) or `case_restored` (with its case)."""
    return {
        "document_id": document.id,
        "case_id": document.case_id,
        "title": document.title,
        "restored_by": restored_by,
        "reason": reason,
        "restored_at": format_timestamp(utcnow()),
    }


def document_purged(document: Document, purged_by: str | None, reason: str) -> dict[str, Any]:
    """`reason`: `purged`, `case_purged` or `retention`."""
    return {
        "document_id": document.id,
        "case_id": document.case_id,
        "title": document.title,
        "sha256": document.sha256,
        "purged_by": purged_by,
        "reason": reason,
        "purged_at": format_timestamp(utcnow()),
    }


def system_backup_completed(
    *,
    file: str,
    size_bytes: int,
    sha256: str,
    database: str,
    documents: int,
    started_at: str,
    duration_ms: int,
) -> dict[str, Any]:
    return {
        "file": file,
        "size_bytes": size_bytes,
        "sha256": sha256,
        "database": database,
        "documents": documents,
        "started_at": started_at,
        "completed_at": format_timestamp(utcnow()),
        "duration_ms": duration_ms,
    }


def system_maintenance_scheduled(maintenance: dict[str, Any], scheduled_by: str | None) -> dict[str, Any]:
    return {
        "scheduled_start": maintenance.get("scheduled_start"),
        "scheduled_end": maintenance.get("scheduled_end"),
        "message": maintenance.get("message"),
        "scheduled_by": scheduled_by,
    }


def system_error(
    *, request_id: str | None, method: str, path: str, error_type: str, fingerprint: str
) -> dict[str, Any]:
    """Only what identifies the failure: never the exception's message, which may hold data."""
    request = {"request_id": request_id, "method": method, "path": path}
    failure = {"error_type": error_type, "fingerprint": fingerprint}
    return {**request, **failure, "occurred_at": format_timestamp(utcnow())}


def _job(job: AiJob) -> dict[str, Any]:
    return {"job_id": job.id, "kind": job.kind, "case_id": job.case_id, "document_id": job.document_id}


def ai_processing_started(job: AiJob) -> dict[str, Any]:
    return {**_job(job), "attempt": job.attempts_made, "started_at": format_timestamp(utcnow())}


def ai_processing_completed(job: AiJob, *, status: str, duration_ms: int) -> dict[str, Any]:
    """`status`: `completed`, or `skipped` for a document with no extractable text."""
    return {
        **_job(job),
        "status": status,
        "duration_ms": duration_ms,
        "completed_at": format_timestamp(utcnow()),
    }


def ai_processing_failed(job: AiJob, *, reason: str, will_retry: bool) -> dict[str, Any]:
    return {
        **_job(job),
        "reason": reason,
        "attempt": job.attempts_made,
        "will_retry": will_retry,
        "failed_at": format_timestamp(utcnow()),
    }


def document_processed(document: Document) -> dict[str, Any]:
    ai = document.ai or {}
    summary = ai.get("summary") or {}
    suggested = ai.get("suggested_type") or {}
    return {
        "document_id": document.id,
        "case_id": document.case_id,
        "title": document.title,
        "processing_status": document.processing_status,
        "language": ai.get("language"),
        "page_count": ai.get("page_count"),
        "word_count": ai.get("word_count"),
        "suggested_type": suggested.get("label"),
        "summary": summary.get("text"),
        "processed_at": format_timestamp(utcnow()),
    }


def contact_created(contact: Contact) -> dict[str, Any]:
    return {
        "contact_id": contact.id,
        **_attributes(contact, "kind", "name", "aliases", "tags", "created_by"),
        "custom_fields": dict(contact.custom_fields or {}),
        "created_at": format_timestamp(contact.created_at),
    }


def contact_updated(
    contact: Contact, changes: dict[str, dict[str, Any]], updated_by: str | None
) -> dict[str, Any]:
    return {
        "contact_id": contact.id,
        "changes": changes,
        "updated_by": updated_by,
        "updated_at": format_timestamp(contact.updated_at),
    }


def contact_deleted(contact: Contact, deleted_by: str | None) -> dict[str, Any]:
    return {
        "contact_id": contact.id,
        "name": contact.name,
        "deleted_by": deleted_by,
        "deleted_at": format_timestamp(utcnow()),
    }


def _party(party: Party) -> dict[str, Any]:
    return {"party_id": party.id, **_attributes(party, "case_id", "contact_id", "role")}


def party_added(party: Party, added_by: str | None) -> dict[str, Any]:
    return {
        **_party(party),
        "starts_on": party.starts_on.isoformat() if party.starts_on else None,
        "ends_on": party.ends_on.isoformat() if party.ends_on else None,
        "conflict_check_id": party.conflict_check_id,
        "added_by": added_by,
        "added_at": format_timestamp(party.created_at),
    }


def party_removed(party: Party, removed_by: str | None) -> dict[str, Any]:
    return {**_party(party), "removed_by": removed_by, "removed_at": format_timestamp(utcnow())}


def conflict_check_completed(check: ConflictCheck) -> dict[str, Any]:
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


def _note(note: Note) -> dict[str, Any]:
    """A note's body may be privileged: events carry what it is attached to, never its text."""
    return {"note_id": note.id, **_attributes(note, "case_id", "contact_id", "author_id", "format", "pinned")}


def note_created(note: Note) -> dict[str, Any]:
    return {**_note(note), "version": note.version, "created_at": format_timestamp(note.created_at)}


def note_updated(note: Note, changed: list[str], updated_by: str | None) -> dict[str, Any]:
    return {
        **_note(note),
        "version": note.version,
        "changed": changed,
        "updated_by": updated_by,
        "updated_at": format_timestamp(note.updated_at),
    }


def note_deleted(note: Note, deleted_by: str | None) -> dict[str, Any]:
    return {**_note(note), "deleted_by": deleted_by, "deleted_at": format_timestamp(utcnow())}


def _task(task: Task) -> dict[str, Any]:
    return {
        "task_id": task.id,
        **_attributes(task, "case_id", "title", "assignee_id", "due_at", "priority", "status"),
        **_attributes(task, "deadline_id", "rule_id"),
    }


def task_created(task: Task) -> dict[str, Any]:
    return {**_task(task), "created_by": task.created_by, "created_at": format_timestamp(task.created_at)}


def task_updated(task: Task, changes: dict[str, dict[str, Any]], updated_by: str | None) -> dict[str, Any]:
    return {
        **_task(task),
        "changes": changes,
        "updated_by": updated_by,
        "updated_at": format_timestamp(task.updated_at),
    }


def task_deleted(task: Task, deleted_by: str | None) -> dict[str, Any]:
    return {**_task(task), "deleted_by": deleted_by, "deleted_at": format_timestamp(utcnow())}


def _deadline(deadline: Deadline) -> dict[str, Any]:
    return {
        "deadline_id": deadline.id,
        **_attributes(deadline, "case_id", "rule_set", "rule_set_version", "trigger"),
        "trigger_date": deadline.trigger_date.isoformat(),
    }


def deadline_saved(deadline: Deadline, tasks: list[Task], saved_by: str | None) -> dict[str, Any]:
    return {
        **_deadline(deadline),
        "tasks": [{"task_id": t.id, "rule_id": t.rule_id, "due_at": t.due_at} for t in tasks],
        "saved_by": saved_by,
    }


def deadline_moved(
    deadline: Deadline, old_date: str, moved: list[dict[str, Any]], moved_by: str | None
) -> dict[str, Any]:
    """`moved`: `{task_id, rule_id, from, to}` for each task whose due date changed."""
    return {**_deadline(deadline), "from": old_date, "tasks": moved, "moved_by": moved_by}


def deadline_deleted(deadline: Deadline, task_ids: list[str], deleted_by: str | None) -> dict[str, Any]:
    """`task_ids`: the open tasks deleted with it (done and cancelled ones stay)."""
    return {**_deadline(deadline), "deleted_tasks": task_ids, "deleted_by": deleted_by}


def audit_tree_head(head: dict[str, Any]) -> dict[str, Any]:
    """A signed tree head of the audit log, as `GET /audit/tree-heads/latest` shows it: a firm
    that keeps these outside Casefile can later prove the log was not rewritten."""
    return {
        "tree_size": head["tree_size"],
        "root_hash": head["root_hash"],
        "timestamp": head["timestamp"],
        "signed_at": format_timestamp(datetime.fromtimestamp(head["timestamp"] / 1000, UTC)),
        "key_id": head["key_id"],
        "signature": head["signature"],
    }


def custom_field(
    definition: dict[str, Any], changes: dict[str, Any] | None, changed_by: str | None
) -> dict[str, Any]:
    """A field's definition as `GET /custom-fields/{id}` shows it; `changes` on an update."""
    data = {"field": definition, "changed_by": changed_by}
    return data if changes is None else {**data, "changes": changes}


def custom_field_set(
    definition: dict[str, Any], changes: dict[str, Any] | None, changed_by: str | None
) -> dict[str, Any]:
    data = {"field_set": definition, "changed_by": changed_by}
    return data if changes is None else {**data, "changes": changes}
