"""Work done later on a caller's behalf (a bulk job, a matter export): the caller's principal and
request context, kept with the job as JSON when it is asked for, and rebuilt by the worker, so that
the work has exactly the caller's access and its audit entries name the caller."""

from __future__ import annotations

from typing import Any

from casefile.auth.permissions import Principal
from casefile.request_context import RequestContext, current_context


def acting_as(principal: Principal) -> dict[str, Any]:
    """The principal and the current request's context, as JSON."""
    context = current_context() or RequestContext()
    return {
        "principal": {
            "kind": principal.kind,
            "id": principal.id,
            "permissions": sorted(principal.permissions),
            "role": principal.role,
            "key_creator_id": principal.key_creator_id,
            "key_creator_role": principal.key_creator_role,
            "key_case_ids": None if principal.key_case_ids is None else sorted(principal.key_case_ids),
        },
        "context": {
            "request_id": context.request_id,
            "ip": context.ip,
            "user_agent": context.user_agent,
            "actor_type": context.actor_type,
            "actor_id": context.actor_id,
            "user_id": context.user_id,
        },
    }


def principal_of(stored: dict[str, Any]) -> Principal:
    """The principal `acting_as` kept."""
    principal = stored["principal"]
    key_cases = principal.get("key_case_ids")
    return Principal(
        kind=principal["kind"],
        id=principal["id"],
        permissions=frozenset(principal["permissions"]),
        role=principal.get("role"),
        key_creator_id=principal.get("key_creator_id"),
        key_creator_role=principal.get("key_creator_role"),
        key_case_ids=None if key_cases is None else frozenset(key_cases),
    )


def context_of(stored: dict[str, Any]) -> RequestContext:
    """The request context `acting_as` kept (for `request_context(...)` around the work)."""
    return RequestContext(**stored["context"])
