"""The event catalogue: every event name, their groups, and which names a webhook's subscription
takes (docs/api-conventions.md#events). What each event's `data` holds is `events.payloads`."""

from __future__ import annotations

EVENT_NAMES: tuple[str, ...] = (
    "case.created",
    "case.updated",
    "case.status_changed",
    "case.assigned",
    "case.deleted",
    "case.access_changed",
    "case.restored",
    "case.purged",
    "case.hold_placed",
    "case.hold_released",
    "document.uploaded",
    "document.processed",
    "document.updated",
    "document.deleted",
    "document.restored",
    "document.purged",
    "group.created",
    "group.updated",
    "group.members_changed",
    "group.deleted",
    "user.login",
    "user.logout",
    "user.permissions_changed",
    "system.backup_completed",
    "system.maintenance_scheduled",
    "system.error",
    "ai.processing_started",
    "ai.processing_completed",
    "ai.processing_failed",
    "contact.created",
    "contact.updated",
    "contact.deleted",
    "party.added",
    "party.removed",
    "conflict_check.completed",
    "note.created",
    "note.updated",
    "note.deleted",
    "task.created",
    "task.updated",
    "task.deleted",
    "deadline.saved",
    "deadline.moved",
    "deadline.deleted",
    "audit.tree_head",
    "webhook.failing",
    "webhook.disabled",
    "time_entry.created",
    "time_entry.updated",
    "time_entry.deleted",
    "expense.created",
    "invoice.created",
    "invoice.approved",
    "invoice.sent",
    "invoice.paid",
    "invoice.voided",
    "invoice.payment_recorded",
    "trust.deposit",
    "trust.withdrawal",
    "trust.transfer",
    "trust.reversal",
)

EVENT_GROUPS: frozenset[str] = frozenset(name.split(".", 1)[0] for name in EVENT_NAMES)


def subscribes(patterns: list[str], name: str) -> bool:
    """Whether a webhook subscribed to `patterns` (names, `*`, `group.*`) receives event `name`."""
    group = name.split(".", 1)[0]
    return any(p in ("*", name, f"{group}.*") for p in patterns)
