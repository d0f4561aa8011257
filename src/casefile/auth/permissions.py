"""Permissions `<action>:<resource>` (contract §4), roles, and the authenticated principal."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ACTIONS = ("read", "write", "delete")
RESOURCES = ("cases", "documents", "users", "webhooks", "config", "api_keys")

ROLE_PERMISSIONS: dict[str, frozenset[str]] = {
    "admin": frozenset({"*:*"}),
    "attorney": frozenset({f"{a}:{r}" for a in ACTIONS for r in ("cases", "documents")}),
    "paralegal": frozenset({f"{a}:{r}" for a in ACTIONS for r in ("cases", "documents")}),
    "viewer": frozenset({"read:cases", "read:documents"}),
}


def is_valid_permission(permission: str) -> bool:
    action, sep, resource = permission.partition(":")
    return bool(sep) and action in (*ACTIONS, "*") and resource in (*RESOURCES, "*")


def grants(held: frozenset[str], needed: str) -> bool:
    """Whether any held permission covers `needed`. `*` stands for any action or resource;
    `write` does not imply `read`."""
    action, _, resource = needed.partition(":")
    return any(
        (h_action in ("*", action)) and (h_resource in ("*", resource))
        for h_action, _, h_resource in (h.partition(":") for h in held)
    )


@dataclass(frozen=True)
class Principal:
    """Who is calling: a user (by access token) or an API key, with what it may do."""

    kind: Literal["user", "api_key"]
    id: str
    permissions: frozenset[str]
    role: str | None = None
    session_id: str | None = None
    token_expires_at: float | None = None

    @property
    def is_admin_user(self) -> bool:
        return self.kind == "user" and self.role == "admin"

    @property
    def actor_id(self) -> str:
        """Recorded as `created_by`, `uploaded_by`, …: the user's id, or the API key's id."""
        return self.id

    def can(self, permission: str) -> bool:
        return grants(self.permissions, permission)
