"""The event catalogue with each event's description and the JSON Schema of its `data`, generated
from the types its builder returns (`events.schemas`): `GET /webhook-event-types`."""

from __future__ import annotations

import functools
from typing import Any

from pydantic import TypeAdapter

from casefile.audit.service import DOCUMENT_TEXT_FIELDS
from casefile.events.billing_schemas import (
    ExpenseCreated,
    InvoiceData,
    PaymentRecorded,
    TimeEntryData,
    TrustEntryData,
)
from casefile.events.catalogue import EVENT_NAMES
from casefile.events.export_payloads import ExportCompleted
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
    ConflictCheckCompleted,
    ContactCreated,
    ContactDeleted,
    ContactUpdated,
    CustomFieldChanged,
    CustomFieldSetChanged,
    DeadlineDeleted,
    DeadlineMoved,
    DeadlineSaved,
    DocumentDeleted,
    DocumentProcessed,
    DocumentPurged,
    DocumentRestored,
    DocumentUpdated,
    DocumentUploaded,
    GroupChanged,
    HoldPlaced,
    HoldReleased,
    MaintenanceScheduled,
    NoteCreated,
    NoteDeleted,
    NoteUpdated,
    PartyAdded,
    PartyRemoved,
    SystemErrorData,
    TaskCreated,
    TaskDeleted,
    TaskUpdated,
    TreeHead,
    UserLogin,
    UserLogout,
    UserPermissionsChanged,
    WebhookDisabled,
    WebhookFailing,
)

# Each event: what it means, and the type of its `data`.
EVENT_TYPES: dict[str, tuple[str, Any]] = {
    "case.created": ("A matter was opened", CaseCreated),
    "case.updated": ("A matter's fields changed (`changes`: {field: {from, to}})", CaseUpdated),
    "case.status_changed": ("A matter moved to another status", CaseStatusChanged),
    "case.assigned": ("A user was assigned to a matter", CaseAssigned),
    "case.deleted": ("A matter went to the trash", CaseDeleted),
    "case.access_changed": ("A matter's access (firm, restricted, walls) changed", CaseAccessChanged),
    "case.restored": ("A matter came back from the trash, with its documents", CaseRestored),
    "case.purged": ("A matter was deleted for good (by hand or by retention)", CasePurged),
    "case.hold_placed": ("A legal hold was placed on a matter", HoldPlaced),
    "case.hold_released": ("A legal hold was released", HoldReleased),
    "document.uploaded": ("A document was uploaded to a matter", DocumentUploaded),
    "document.processed": ("A document's AI processing finished", DocumentProcessed),
    "document.updated": ("A document's fields changed", DocumentUpdated),
    "document.deleted": ("A document went to the trash", DocumentDeleted),
    "document.restored": ("A document came back from the trash", DocumentRestored),
    "document.purged": ("A document was deleted for good", DocumentPurged),
    "group.created": ("A group was created", GroupChanged),
    "group.updated": ("A group was renamed or described", GroupChanged),
    "group.members_changed": ("A group's members changed", GroupChanged),
    "group.deleted": ("A group was deleted", GroupChanged),
    "user.login": ("A user signed in", UserLogin),
    "user.logout": ("A user signed out", UserLogout),
    "user.permissions_changed": ("A user's role, permissions or status changed", UserPermissionsChanged),
    "system.backup_completed": ("A backup archive was written", BackupCompleted),
    "system.maintenance_scheduled": ("A maintenance window was announced", MaintenanceScheduled),
    "system.error": ("A request failed with an unexpected error (500)", SystemErrorData),
    "ai.processing_started": ("An AI job started", AiStarted),
    "ai.processing_completed": ("An AI job finished", AiCompleted),
    "ai.processing_failed": ("An AI job failed", AiFailed),
    "contact.created": ("A contact was created", ContactCreated),
    "contact.updated": ("A contact's fields changed", ContactUpdated),
    "contact.deleted": ("A contact was deleted", ContactDeleted),
    "party.added": ("A contact became a party to a matter", PartyAdded),
    "party.removed": ("A party was removed from a matter", PartyRemoved),
    "conflict_check.completed": (
        "A conflict check ran (hits are counted, never named)",
        ConflictCheckCompleted,
    ),
    "note.created": ("A note was written (never its text)", NoteCreated),
    "note.updated": ("A note changed (never its text)", NoteUpdated),
    "note.deleted": ("A note was deleted", NoteDeleted),
    "task.created": ("A task was created", TaskCreated),
    "task.updated": ("A task changed", TaskUpdated),
    "task.deleted": ("A task was deleted", TaskDeleted),
    "deadline.saved": ("Deadlines were computed and saved, with their tasks", DeadlineSaved),
    "deadline.moved": ("A deadline's trigger date moved, and its tasks with it", DeadlineMoved),
    "deadline.deleted": ("A deadline was deleted with its open tasks", DeadlineDeleted),
    "audit.tree_head": ("A signed tree head of the audit log", TreeHead),
    "export.completed": (
        "A matter's export (zip) is ready to download: its SHA-256, size and contents",
        ExportCompleted,
    ),
    "webhook.failing": (
        "Another webhook is failing (first failure, then after 1 h and 12 h)",
        WebhookFailing,
    ),
    "webhook.disabled": ("Another webhook was disabled by its circuit", WebhookDisabled),
    "custom_field.created": ("An administrator defined a custom field", CustomFieldChanged),
    "custom_field.updated": ("A custom field's definition changed (`changes`)", CustomFieldChanged),
    "custom_field_set.created": ("An administrator made a field set", CustomFieldSetChanged),
    "custom_field_set.updated": ("A field set changed (`changes`)", CustomFieldSetChanged),
    "time_entry.created": ("Time was recorded on a matter (never its description)", TimeEntryData),
    "time_entry.updated": ("A time entry changed", TimeEntryData),
    "time_entry.deleted": ("A time entry was deleted", TimeEntryData),
    "expense.created": ("An expense was recorded on a matter", ExpenseCreated),
    "invoice.created": ("A draft invoice was made from unbilled time and expenses", InvoiceData),
    "invoice.approved": ("An invoice was approved: numbered, its entries billed", InvoiceData),
    "invoice.sent": ("An invoice was sent", InvoiceData),
    "invoice.paid": ("An invoice was paid in full", InvoiceData),
    "invoice.voided": ("An invoice was voided; its entries are billable again", InvoiceData),
    "invoice.payment_recorded": ("A payment (part or all) was recorded on an invoice", PaymentRecorded),
    "trust.deposit": ("Client money was deposited in trust for a matter", TrustEntryData),
    "trust.withdrawal": ("Client money was paid out of a matter's trust funds", TrustEntryData),
    "trust.transfer": ("Trust money moved to operating to pay an invoice", TrustEntryData),
    "trust.reversal": ("A trust entry was reversed by a new entry", TrustEntryData),
}
assert set(EVENT_TYPES) == set(EVENT_NAMES), "every catalogue event has its data type"


@functools.cache
def data_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of event `name`'s `data`."""
    schema = TypeAdapter(EVENT_TYPES[name][1]).json_schema()
    return _erasable(schema) if name.startswith("document.") else schema


def _erasable(schema: dict[str, Any]) -> dict[str, Any]:
    """A document event's schema that also admits the payload a purge leaves (decision 0028): the
    purge rewrites the document's earlier events to their ids, `changes` as `changed_fields`, and
    `erased: true`, and a delivery still pending sends that. Without `erased` the text is required
    as before."""
    text = [field for field in schema["required"] if field in DOCUMENT_TEXT_FIELDS]
    properties = dict(schema["properties"])
    properties["erased"] = {"const": True, "description": "Present when the document was purged"}
    if "changes" in properties:
        properties["changed_fields"] = {
            "type": "array",
            "items": {"type": "string"},
            "description": "What `changes` named, once the document was purged",
        }
    return {
        **schema,
        "properties": properties,
        "required": [field for field in schema["required"] if field not in DOCUMENT_TEXT_FIELDS],
        "if": {"required": ["erased"]},
        "else": {"required": text},
    }


def event_types() -> list[dict[str, Any]]:
    """The catalogue as `GET /webhook-event-types` lists it, in the catalogue's order."""
    return [
        {
            "name": name,
            "group": name.split(".", 1)[0],
            "description": EVENT_TYPES[name][0],
            "data_schema": data_schema(name),
        }
        for name in EVENT_NAMES
    ]
