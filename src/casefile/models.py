"""Imports every model so that `Base.metadata` knows the whole schema (Alembic, tests)."""

from casefile.ai.models import AiJob
from casefile.api_keys.models import ApiKey
from casefile.audit.models import AuditChainHead, AuditEntry
from casefile.auth.models import AuthSession, RefreshToken, RevokedSession
from casefile.calendar_feed.models import CalendarToken
from casefile.cases.models import Case, CaseAssignee, CaseGrant, CaseNumberCounter, CaseWall
from casefile.config.models import SystemConfig
from casefile.conflicts.models import ConflictCheck
from casefile.contacts.models import Contact, ContactName, Party
from casefile.db import Base
from casefile.deadlines.models import Deadline, DeadlineRuleSet
from casefile.documents.models import Blob, Document
from casefile.events.models import Event
from casefile.groups.models import Group, GroupMember
from casefile.holds.models import LegalHold
from casefile.notes.models import Note, NoteVersion
from casefile.search.models import Passage
from casefile.tasks.models import Task
from casefile.users.models import User
from casefile.webhooks.models import Delivery, DeliveryAttempt, Webhook

__all__ = [
    "AiJob",
    "ApiKey",
    "AuditChainHead",
    "AuditEntry",
    "AuthSession",
    "Base",
    "Blob",
    "CalendarToken",
    "Case",
    "CaseAssignee",
    "CaseGrant",
    "CaseNumberCounter",
    "CaseWall",
    "ConflictCheck",
    "Contact",
    "ContactName",
    "Deadline",
    "DeadlineRuleSet",
    "Delivery",
    "DeliveryAttempt",
    "Document",
    "Event",
    "Group",
    "GroupMember",
    "LegalHold",
    "Note",
    "NoteVersion",
    "Party",
    "Passage",
    "RefreshToken",
    "RevokedSession",
    "SystemConfig",
    "Task",
    "User",
    "Webhook",
]
