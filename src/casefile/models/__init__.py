"""Every table of Casefile, one module per domain, in one package below every domain: a domain
reads another's rows without importing that domain (docs/decisions/0018-domain-layout.md).
Import models from here (`from casefile.models import Case`); `Base.metadata` knows the whole
schema once this package is imported (Alembic, tests)."""

from casefile.db import Base
from casefile.models.ai import JOB_KINDS, JOB_STATUSES, AiJob
from casefile.models.api_keys import ApiKey
from casefile.models.audit import (
    PREVIOUS_RELEASE_SEQ_BASE,
    AuditEntry,
    AuditLogState,
    AuditSigningKey,
    AuditTreeHead,
    AuditTreeNode,
)
from casefile.models.auth import AuthSession, RefreshToken, RevokedSession
from casefile.models.billing import (
    ENTRY_STATES,
    INVOICE_STATES,
    BillingRate,
    Expense,
    Invoice,
    InvoiceCounter,
    InvoiceLine,
    InvoicePayment,
    TimeEntry,
    Timer,
)
from casefile.models.bulk import BULK_STATUSES, BulkJob
from casefile.models.calendar_feed import CalendarToken
from casefile.models.cases import Case, CaseAssignee, CaseGrant, CaseNumberCounter, CaseWall
from casefile.models.config import CONFIG_ROW_ID, SystemConfig
from casefile.models.conflicts import ConflictCheck
from casefile.models.contacts import Contact, ContactName, Party
from casefile.models.custom_fields import CustomField, CustomFieldSet, CustomFieldValue
from casefile.models.deadlines import Deadline, DeadlineRuleSet
from casefile.models.documents import Blob, Document, DocumentVersion, document_not_trashed
from casefile.models.events import Event
from casefile.models.groups import Group, GroupMember
from casefile.models.holds import LegalHold
from casefile.models.idempotency import IdempotencyKey
from casefile.models.notes import Note, NoteVersion
from casefile.models.search import Passage
from casefile.models.tasks import Task
from casefile.models.templates import MatterTemplate
from casefile.models.trash import TrashItem
from casefile.models.trust import TRUST_KINDS, TrustBalance, TrustEntry
from casefile.models.users import ROLES, User
from casefile.models.webhooks import DELIVERY_STATUSES, Delivery, DeliveryAttempt, Webhook, WebhookRecovery

__all__ = [
    "BULK_STATUSES",
    "CONFIG_ROW_ID",
    "DELIVERY_STATUSES",
    "ENTRY_STATES",
    "INVOICE_STATES",
    "JOB_KINDS",
    "JOB_STATUSES",
    "PREVIOUS_RELEASE_SEQ_BASE",
    "ROLES",
    "TRUST_KINDS",
    "AiJob",
    "ApiKey",
    "AuditEntry",
    "AuditLogState",
    "AuditSigningKey",
    "AuditTreeHead",
    "AuditTreeNode",
    "AuthSession",
    "Base",
    "BillingRate",
    "Blob",
    "BulkJob",
    "CalendarToken",
    "Case",
    "CaseAssignee",
    "CaseGrant",
    "CaseNumberCounter",
    "CaseWall",
    "ConflictCheck",
    "Contact",
    "ContactName",
    "CustomField",
    "CustomFieldSet",
    "CustomFieldValue",
    "Deadline",
    "DeadlineRuleSet",
    "Delivery",
    "DeliveryAttempt",
    "Document",
    "DocumentVersion",
    "Event",
    "Expense",
    "Group",
    "GroupMember",
    "IdempotencyKey",
    "Invoice",
    "InvoiceCounter",
    "InvoiceLine",
    "InvoicePayment",
    "LegalHold",
    "MatterTemplate",
    "Note",
    "NoteVersion",
    "Party",
    "Passage",
    "RefreshToken",
    "RevokedSession",
    "SystemConfig",
    "Task",
    "TimeEntry",
    "Timer",
    "TrashItem",
    "TrustBalance",
    "TrustEntry",
    "User",
    "Webhook",
    "WebhookRecovery",
    "document_not_trashed",
]
