"""What each event's `data` holds: one TypedDict per event, the return type of its builder in
`events.payloads` (mypy checks every builder against it), from which `events.event_types`
generates the JSON Schema that `GET /webhook-event-types` publishes."""

from __future__ import annotations

from typing import Any, NotRequired

from typing_extensions import TypedDict  # pydantic reads TypedDicts of typing_extensions before 3.12

Changes = dict[str, dict[str, Any]]  # {field: {from, to}}


class CaseCreated(TypedDict):
    case_id: str
    title: str
    case_number: str
    case_type: str | None
    jurisdiction: str | None
    client_name: str | None
    status: str
    priority: str
    created_by: str | None
    custom_fields: dict[str, Any]
    tags: list[str]
    template_id: str | None
    template_version: int | None
    created_at: str


class CaseUpdated(TypedDict):
    case_id: str
    case_number: str
    changes: Changes
    updated_by: str | None
    updated_at: str


CaseStatusChanged = TypedDict(
    "CaseStatusChanged", {"case_id": str, "from": str, "to": str, "changed_by": str | None}
)


class CaseAssigned(TypedDict):
    case_id: str
    user_id: str
    assigned_by: str | None
    assigned_to: list[str]


CaseAccessChanged = TypedDict(
    "CaseAccessChanged",
    {"case_id": str, "from": dict[str, Any], "to": dict[str, Any], "changed_by": str | None},
)


class GroupChanged(TypedDict):
    group_id: str
    name: str
    member_ids: list[str]
    changed_by: str | None


class CaseDeleted(TypedDict):
    case_id: str
    case_number: str
    deleted_by: str | None
    deleted_at: str


class CaseRestored(TypedDict):
    case_id: str
    case_number: str
    restored_by: str | None
    document_ids: list[str]
    restored_at: str


class CasePurged(TypedDict):
    case_id: str
    case_number: str
    purged_by: str | None
    reason: str
    purged_at: str


class HoldFields(TypedDict):
    hold_id: str
    case_id: str
    reason: str


class HoldPlaced(HoldFields):
    placed_by: str | None
    placed_at: str


class HoldReleased(HoldFields):
    released_by: str | None
    released_at: str | None


class UserLogin(TypedDict):
    user_id: str
    email: str
    method: str
    at: str


class UserLogout(TypedDict):
    user_id: str
    email: str
    at: str


class UserPermissionsChanged(TypedDict):
    user_id: str
    email: str
    changes: Changes
    changed_by: str | None


class DocumentUploaded(TypedDict):
    document_id: str
    case_id: str
    title: str
    document_type: str | None
    tags: list[str]
    description: str | None
    file_size: int
    file_type: str
    uploaded_by: str | None
    uploaded_via_key: str | None
    uploaded_at: str


class DocumentUpdated(TypedDict):
    document_id: str
    case_id: str
    # The document's current version: one more than before when `changes` has `version` (a new
    # version was uploaded: POST /documents/{id}/versions).
    version: int
    changes: Changes
    updated_by: str | None
    updated_at: str


class DocumentDeleted(TypedDict):
    document_id: str
    case_id: str
    title: str
    sha256: str
    deleted_by: str | None
    reason: str
    deleted_at: str


class DocumentRestored(TypedDict):
    document_id: str
    case_id: str
    title: str
    restored_by: str | None
    reason: str
    restored_at: str


class DocumentPurged(TypedDict):
    document_id: str
    case_id: str
    # Null: a purge leaves no text of the document in the database, this event's payload included
    # (docs/decisions/0028-document-versions.md); earlier events of it keep only its ids.
    title: str | None
    sha256: str | None
    purged_by: str | None
    reason: str
    purged_at: str


class DocumentProcessed(TypedDict):
    document_id: str
    case_id: str
    title: str
    processing_status: str
    language: str | None
    page_count: int | None
    word_count: int | None
    suggested_type: str | None
    summary: str | None
    processed_at: str


class BackupCompleted(TypedDict):
    file: str
    size_bytes: int
    sha256: str
    database: str
    documents: int
    started_at: str
    completed_at: str
    duration_ms: int


class MaintenanceScheduled(TypedDict):
    scheduled_start: str | None
    scheduled_end: str | None
    message: str | None
    scheduled_by: str | None


class SystemErrorData(TypedDict):
    request_id: str | None
    method: str
    path: str
    error_type: str
    fingerprint: str
    occurred_at: str


class JobFields(TypedDict):
    job_id: str
    kind: str
    case_id: str
    document_id: str | None


class AiStarted(JobFields):
    attempt: int
    started_at: str


class AiCompleted(JobFields):
    status: str
    duration_ms: int
    completed_at: str


class AiFailed(JobFields):
    reason: str
    attempt: int
    will_retry: bool
    failed_at: str


class ContactCreated(TypedDict):
    contact_id: str
    kind: str
    name: str
    aliases: list[str]
    tags: list[str]
    custom_fields: dict[str, Any]
    created_by: str | None
    created_at: str


class ContactUpdated(TypedDict):
    contact_id: str
    changes: Changes
    updated_by: str | None
    updated_at: str


class ContactDeleted(TypedDict):
    contact_id: str
    name: str
    deleted_by: str | None
    deleted_at: str


class PartyFields(TypedDict):
    party_id: str
    case_id: str
    contact_id: str
    role: str


class PartyAdded(PartyFields):
    starts_on: str | None
    ends_on: str | None
    conflict_check_id: str | None
    added_by: str | None
    added_at: str


class PartyRemoved(PartyFields):
    removed_by: str | None
    removed_at: str


class ConflictCheckCompleted(TypedDict):
    conflict_check_id: str
    case_id: str | None
    names: list[str]
    hit_count: int
    created_by: str | None
    created_at: str


class NoteFields(TypedDict):
    note_id: str
    case_id: str | None
    contact_id: str | None
    author_id: str | None
    format: str
    pinned: bool


class NoteCreated(NoteFields):
    version: int
    created_at: str


class NoteUpdated(NoteFields):
    version: int
    changed: list[str]
    updated_by: str | None
    updated_at: str


class NoteDeleted(NoteFields):
    deleted_by: str | None
    deleted_at: str


class TaskFields(TypedDict):
    task_id: str
    case_id: str
    title: str
    assignee_id: str | None
    due_at: str | None
    priority: str
    status: str
    deadline_id: str | None
    rule_id: str | None


class TaskCreated(TaskFields):
    created_by: str | None
    created_at: str


class TaskUpdated(TaskFields):
    changes: Changes
    updated_by: str | None
    updated_at: str


class TaskDeleted(TaskFields):
    deleted_by: str | None
    deleted_at: str


class DeadlineFields(TypedDict):
    deadline_id: str
    case_id: str
    rule_set: str
    rule_set_version: str
    trigger: str
    trigger_date: str


class DeadlineTask(TypedDict):
    task_id: str
    rule_id: str | None
    due_at: str | None


class DeadlineSaved(DeadlineFields):
    tasks: list[DeadlineTask]
    saved_by: str | None


MovedTask = TypedDict(
    "MovedTask", {"task_id": str, "rule_id": str | None, "from": str | None, "to": str | None}
)
DeadlineMoved = TypedDict(
    "DeadlineMoved",
    {
        "deadline_id": str,
        "case_id": str,
        "rule_set": str,
        "rule_set_version": str,
        "trigger": str,
        "trigger_date": str,
        "from": str,
        "tasks": list[MovedTask],
        "moved_by": str | None,
    },
)


class DeadlineDeleted(DeadlineFields):
    deleted_tasks: list[str]
    deleted_by: str | None


class TreeHead(TypedDict):
    tree_size: int
    root_hash: str
    timestamp: int
    signed_at: str
    key_id: str
    signature: str


class WebhookState(TypedDict):
    webhook_id: str
    name: str
    url: str
    failing_since: str
    consecutive_failures: int
    last_status_code: int | None
    last_error: str | None


class WebhookFailing(WebhookState):
    at: str


class WebhookDisabled(WebhookState):
    reason: str
    disabled_at: str


class CustomFieldChanged(TypedDict):
    """`custom_field.created` / `.updated`: the definition as `GET /custom-fields/{id}` shows it."""

    field: dict[str, Any]
    changed_by: str | None
    changes: NotRequired[Changes]


class CustomFieldSetChanged(TypedDict):
    field_set: dict[str, Any]
    changed_by: str | None
    changes: NotRequired[Changes]
