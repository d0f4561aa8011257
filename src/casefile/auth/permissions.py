"""Permissions `<action>:<resource>` (docs/api-conventions.md#permissions), roles, and the authenticated
principal."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal


class Permission(StrEnum):
    """What an endpoint can require. A held permission may also be a wildcard pattern (`*:*`,
    `read:*`, `*:cases`), so what a principal holds stays a set of strings."""

    READ_CASES = "read:cases"
    WRITE_CASES = "write:cases"
    DELETE_CASES = "delete:cases"
    READ_DOCUMENTS = "read:documents"
    WRITE_DOCUMENTS = "write:documents"
    DELETE_DOCUMENTS = "delete:documents"
    READ_USERS = "read:users"
    WRITE_USERS = "write:users"
    DELETE_USERS = "delete:users"
    READ_WEBHOOKS = "read:webhooks"
    WRITE_WEBHOOKS = "write:webhooks"
    DELETE_WEBHOOKS = "delete:webhooks"
    READ_CONFIG = "read:config"
    WRITE_CONFIG = "write:config"
    DELETE_CONFIG = "delete:config"
    READ_API_KEYS = "read:api_keys"
    WRITE_API_KEYS = "write:api_keys"
    DELETE_API_KEYS = "delete:api_keys"
    READ_CONTACTS = "read:contacts"
    WRITE_CONTACTS = "write:contacts"
    DELETE_CONTACTS = "delete:contacts"
    # Running a conflict check only reads; `write:conflicts` and `delete:conflicts` mean nothing.
    READ_CONFLICTS = "read:conflicts"
    # The audit log's signed heads and proofs (administrators hold it; a key of theirs may).
    READ_AUDIT = "read:audit"
    # Time, expenses and invoices; approving an invoice (and setting rates) is its own right.
    READ_BILLING = "read:billing"
    WRITE_BILLING = "write:billing"
    APPROVE_BILLING = "approve:billing"
    # Client money (docs/billing.md#trust-money).
    READ_TRUST = "read:trust"
    WRITE_TRUST = "write:trust"


ACTIONS = tuple(dict.fromkeys(p.partition(":")[0] for p in Permission))
RESOURCES = tuple(dict.fromkeys(p.partition(":")[2] for p in Permission))

# The practice roles work on cases, documents and contacts, and run conflict checks; a viewer reads
# cases, documents and contacts but does not run conflict checks (a check searches every matter of
# the firm, which is more than reading the ones it may see).
_PRACTICE = frozenset(
    {f"{a}:{r}" for a in ACTIONS for r in ("cases", "documents", "contacts")} | {Permission.READ_CONFLICTS}
)
# Lawyers and paralegals record time and expenses and draft invoices; an attorney also approves
# them and moves client money; a paralegal reads the trust ledger.
_BILLING = frozenset({Permission.READ_BILLING, Permission.WRITE_BILLING, Permission.READ_TRUST})
ROLE_PERMISSIONS: dict[str, frozenset[str]] = {
    "admin": frozenset({"*:*"}),
    "attorney": _PRACTICE | _BILLING | {Permission.APPROVE_BILLING, Permission.WRITE_TRUST},
    "paralegal": _PRACTICE | _BILLING,
    "viewer": frozenset({Permission.READ_CASES, Permission.READ_DOCUMENTS, Permission.READ_CONTACTS}),
}


def is_valid_permission(permission: str) -> bool:
    """Whether an API key may hold `permission`: a permission, or a pattern with `*` for either part."""
    action, sep, resource = permission.partition(":")
    return bool(sep) and action in (*ACTIONS, "*") and resource in (*RESOURCES, "*")


# Asked for every row a list answers (what its caller may see of it), always about the same few
# permission sets: remembered rather than parsed again.
@functools.lru_cache(maxsize=4096)
def grants(held: frozenset[str], needed: Permission) -> bool:
    """Whether any held permission covers `needed`. `*` stands for any action or resource;
    `write` does not imply `read`."""
    action, _, resource = needed.partition(":")
    return any(
        (h_action in ("*", action)) and (h_resource in ("*", resource))
        for h_action, _, h_resource in (h.partition(":") for h in held)
    )


def key_permissions(given: list[str], creator_role: str | None) -> frozenset[str]:
    """What an API key may do now: the permissions it was given, cut down to what its creator's
    current role grants, so a key never grants more than its creator has (a creator demoted to
    viewer leaves the key reading only). `creator_role` None (the creator was deleted or disabled):
    nothing. The result is concrete permissions, wildcards expanded."""
    if creator_role is None:
        return frozenset()
    held, role = frozenset(given), ROLE_PERMISSIONS[creator_role]
    return frozenset(p.value for p in Permission if grants(held, p) and grants(role, p))


@dataclass(frozen=True)
class Principal:
    """Who is calling: a user (by access token) or an API key, with what it may do."""

    kind: Literal["user", "api_key"]
    id: str
    permissions: frozenset[str]
    role: str | None = None
    session_id: str | None = None
    token_expires_at: float | None = None
    key_creator_id: str | None = None  # an API key's: the user who made it (None once deleted)
    key_creator_role: str | None = None  # an API key's: its creator's role now
    key_case_ids: frozenset[str] | None = None  # an API key limited to these cases

    @property
    def is_admin_user(self) -> bool:
        return self.kind == "user" and self.role == "admin"

    @property
    def acts_as_admin(self) -> bool:
        """An administrator's token, or a key made by an administrator: for matter access a key
        acts as the user who created it (docs/api-conventions.md#matter-access). Endpoints that
        need an administrator's own token check `is_admin_user` instead."""
        return (self.role if self.kind == "user" else self.key_creator_role) == "admin"

    @property
    def actor_id(self) -> str:
        """Recorded as `created_by`, …: the user's id, or the API key's id (a document's
        `uploaded_by` is `user_id` instead, see documents.service)."""
        return self.id

    @property
    def user_id(self) -> str | None:
        """The user behind the call: the user, or the user who made the API key."""
        return self.id if self.kind == "user" else self.key_creator_id

    @property
    def via_key(self) -> str | None:
        return self.id if self.kind == "api_key" else None

    def can(self, permission: Permission) -> bool:
        return grants(self.permissions, permission)
