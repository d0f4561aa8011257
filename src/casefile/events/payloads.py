"""The builder of each event's `data` (the names are `events.catalogue`'s). Builders take domain
objects and return plain JSON-ready dicts, so a payload's shape is defined once, here, whoever
emits it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from casefile.clock import format_timestamp, utcnow

# Re-exported (`__all__`): emitters import `payloads`.
from casefile.events.payloads_work import (
    conflict_check_completed,
    contact_created,
    contact_deleted,
    contact_updated,
    deadline_deleted,
    deadline_moved,
    deadline_saved,
    note_created,
    note_deleted,
    note_updated,
    party_added,
    party_removed,
    task_created,
    task_deleted,
    task_updated,
)
from casefile.events.schemas import (
    AiCompleted,
    AiFailed,
    AiStarted,
    BackupCompleted,
    CaseAccessChanged,
    CaseAssigned,
    CaseCreated,
    CaseDeleted,
    CasePurged,
    CaseRestored,
    CaseStatusChanged,
    CaseUpdated,
    CustomFieldChanged,
    CustomFieldSetChanged,
    DocumentDeleted,
    DocumentProcessed,
    DocumentPurged,
    DocumentRestored,
    DocumentUpdated,
    DocumentUploaded,
    GroupChanged,
    HoldFields,
    HoldPlaced,
    HoldReleased,
    JobFields,
    MaintenanceScheduled,
    SystemErrorData,
    TreeHead,
    UserLogin,
    UserLogout,
    UserPermissionsChanged,
    WebhookDisabled,
    WebhookFailing,
    WebhookState,
)

if TYPE_CHECKING:
    from casefile.models import (
        AiJob,
        Case,
        Document,
        Group,
        LegalHold,
        User,
    )


def case_created(case: Case) -> CaseCreated:
    return {
        "case_id": case.id,
        "title": case.title,
        "case_number": case.case_number,
        "case_type": case.case_type,
        "jurisdiction": case.jurisdiction,
        "client_name": case.client_name,
        "status": case.status,
        "priority": case.priority,
        "created_by": case.created_by,
        "custom_fields": dict(case.custom_fields or {}),
        "tags": list(case.tags or []),
        "template_id": case.template_id,
        "template_version": case.template_version,
        "created_at": format_timestamp(case.created_at),
    }


def case_updated(case: Case, changes: dict[str, dict[str, Any]], updated_by: str | None) -> CaseUpdated:
    return {
        "case_id": case.id,
        "case_number": case.case_number,
        "changes": changes,
        "updated_by": updated_by,
        "updated_at": format_timestamp(case.updated_at),
    }


def case_status_changed(case: Case, old: str, new: str, changed_by: str | None) -> CaseStatusChanged:
    return {"case_id": case.id, "from": old, "to": new, "changed_by": changed_by}


def case_assigned(case: Case, user_id: str, assigned_by: str | None) -> CaseAssigned:
    return {
        "case_id": case.id,
        "user_id": user_id,
        "assigned_by": assigned_by,
        "assigned_to": case.assigned_to,
    }


def case_access_changed(
    case: Case, before: dict[str, Any], after: dict[str, Any], changed_by: str | None
) -> CaseAccessChanged:
    return {"case_id": case.id, "from": before, "to": after, "changed_by": changed_by}


def group_changed(group: Group, changed_by: str | None) -> GroupChanged:
    return {
        "group_id": group.id,
        "name": group.name,
        "member_ids": group.member_ids,
        "changed_by": changed_by,
    }


def case_deleted(case: Case, deleted_by: str | None) -> CaseDeleted:
    return {
        "case_id": case.id,
        "case_number": case.case_number,
        "deleted_by": deleted_by,
        "deleted_at": format_timestamp(utcnow()),
    }


def case_restored(case: Case, restored_by: str | None, document_ids: list[str]) -> CaseRestored:
    """`document_ids`: the documents that came back with it (those trashed with the case)."""
    return {
        "case_id": case.id,
        "case_number": case.case_number,
        "restored_by": restored_by,
        "document_ids": document_ids,
        "restored_at": format_timestamp(utcnow()),
    }


def case_purged(case: Case, purged_by: str | None, reason: str) -> CasePurged:
    """`reason`: `purged` (DELETE /admin/trash/{id}) or `retention` (older than trash_days)."""
    return {
        "case_id": case.id,
        "case_number": case.case_number,
        "purged_by": purged_by,
        "reason": reason,
        "purged_at": format_timestamp(utcnow()),
    }


def _hold(hold: LegalHold) -> HoldFields:
    return {"hold_id": hold.id, "case_id": hold.case_id, "reason": hold.reason}


def case_hold_placed(hold: LegalHold) -> HoldPlaced:
    return {**_hold(hold), "placed_by": hold.created_by, "placed_at": format_timestamp(hold.created_at)}


def case_hold_released(hold: LegalHold) -> HoldReleased:
    released_at = format_timestamp(hold.released_at) if hold.released_at else None
    return {**_hold(hold), "released_by": hold.released_by, "released_at": released_at}


def user_login(user: User, method: str) -> UserLogin:
    return {"user_id": user.id, "email": user.email, "method": method, "at": format_timestamp(utcnow())}


def user_logout(user: User) -> UserLogout:
    return {"user_id": user.id, "email": user.email, "at": format_timestamp(utcnow())}


def user_permissions_changed(
    user: User, changes: dict[str, dict[str, Any]], changed_by: str | None
) -> UserPermissionsChanged:
    return {"user_id": user.id, "email": user.email, "changes": changes, "changed_by": changed_by}


def document_uploaded(document: Document) -> DocumentUploaded:
    return {
        "document_id": document.id,
        "case_id": document.case_id,
        "title": document.title,
        "document_type": document.document_type,
        "tags": document.tags,
        "description": document.description,
        "file_size": document.file_size,
        "file_type": document.file_type,
        "uploaded_by": document.uploaded_by,
        "uploaded_via_key": document.uploaded_via_key,
        "uploaded_at": format_timestamp(document.uploaded_at),
    }


def document_updated(
    document: Document, changes: dict[str, dict[str, Any]], updated_by: str | None
) -> DocumentUpdated:
    return {
        "document_id": document.id,
        "case_id": document.case_id,
        "version": document.version,
        "changes": changes,
        "updated_by": updated_by,
        "updated_at": format_timestamp(document.updated_at),
    }


def document_deleted(document: Document, deleted_by: str | None, reason: str) -> DocumentDeleted:
    return {
        "document_id": document.id,
        "case_id": document.case_id,
        "title": document.title,
        "sha256": document.sha256,
        "deleted_by": deleted_by,
        "reason": reason,
        "deleted_at": format_timestamp(utcnow()),
    }


def document_restored(document: Document, restored_by: str | None, reason: str) -> DocumentRestored:
    """`reason`: `restored` (on its own) or `case_restored` (with its case)."""
    return {
        "document_id": document.id,
        "case_id": document.case_id,
        "title": document.title,
        "restored_by": restored_by,
        "reason": reason,
        "restored_at": format_timestamp(utcnow()),
    }


def document_purged(document: Document, purged_by: str | None, reason: str) -> DocumentPurged:
    """`reason`: `purged`, `case_purged` or `retention`."""
    return {
        "document_id": document.id,
        "case_id": document.case_id,
        "title": None,
        "sha256": None,
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
) -> BackupCompleted:
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


def system_maintenance_scheduled(
    maintenance: dict[str, Any], scheduled_by: str | None
) -> MaintenanceScheduled:
    return {
        "scheduled_start": maintenance.get("scheduled_start"),
        "scheduled_end": maintenance.get("scheduled_end"),
        "message": maintenance.get("message"),
        "scheduled_by": scheduled_by,
    }


def system_error(
    *, request_id: str | None, method: str, path: str, error_type: str, fingerprint: str
) -> SystemErrorData:
    """Only what identifies the failure: never the exception's message, which may hold data."""
    return {
        "request_id": request_id,
        "method": method,
        "path": path,
        "error_type": error_type,
        "fingerprint": fingerprint,
        "occurred_at": format_timestamp(utcnow()),
    }


def _job(job: AiJob) -> JobFields:
    return {"job_id": job.id, "kind": job.kind, "case_id": job.case_id, "document_id": job.document_id}


def ai_processing_started(job: AiJob) -> AiStarted:
    return {**_job(job), "attempt": job.attempts_made, "started_at": format_timestamp(utcnow())}


def ai_processing_completed(job: AiJob, *, status: str, duration_ms: int) -> AiCompleted:
    """`status`: `completed`, or `skipped` for a document with no extractable text."""
    return {
        **_job(job),
        "status": status,
        "duration_ms": duration_ms,
        "completed_at": format_timestamp(utcnow()),
    }


def ai_processing_failed(job: AiJob, *, reason: str, will_retry: bool) -> AiFailed:
    return {
        **_job(job),
        "reason": reason,
        "attempt": job.attempts_made,
        "will_retry": will_retry,
        "failed_at": format_timestamp(utcnow()),
    }


def document_processed(document: Document) -> DocumentProcessed:
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


def audit_tree_head(head: dict[str, Any]) -> TreeHead:
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


def webhook_failing(state: WebhookState) -> WebhookFailing:
    """`state`: the webhook's id, name, url, `failing_since`, `consecutive_failures`, and its last
    attempt's `last_status_code` and `last_error` (`webhooks.circuit`)."""
    return {**state, "at": format_timestamp(utcnow())}


def webhook_disabled(state: WebhookState, reason: str) -> WebhookDisabled:
    return {**state, "reason": reason, "disabled_at": format_timestamp(utcnow())}


__all__ = [
    "ai_processing_completed",
    "ai_processing_failed",
    "ai_processing_started",
    "audit_tree_head",
    "case_access_changed",
    "case_assigned",
    "case_created",
    "case_deleted",
    "case_hold_placed",
    "case_hold_released",
    "case_purged",
    "case_restored",
    "case_status_changed",
    "case_updated",
    "conflict_check_completed",
    "contact_created",
    "contact_deleted",
    "contact_updated",
    "deadline_deleted",
    "deadline_moved",
    "deadline_saved",
    "document_deleted",
    "document_processed",
    "document_purged",
    "document_restored",
    "document_updated",
    "document_uploaded",
    "group_changed",
    "note_created",
    "note_deleted",
    "note_updated",
    "party_added",
    "party_removed",
    "system_backup_completed",
    "system_error",
    "system_maintenance_scheduled",
    "task_created",
    "task_deleted",
    "task_updated",
    "user_login",
    "user_logout",
    "user_permissions_changed",
    "webhook_disabled",
    "webhook_failing",
]


def custom_field(
    definition: dict[str, Any], changes: dict[str, Any] | None, changed_by: str | None
) -> CustomFieldChanged:
    """A field's definition as `GET /custom-fields/{id}` shows it; `changes` on an update."""
    data: CustomFieldChanged = {"field": definition, "changed_by": changed_by}
    if changes is not None:
        data["changes"] = changes
    return data


def custom_field_set(
    definition: dict[str, Any], changes: dict[str, Any] | None, changed_by: str | None
) -> CustomFieldSetChanged:
    data: CustomFieldSetChanged = {"field_set": definition, "changed_by": changed_by}
    if changes is not None:
        data["changes"] = changes
    return data
