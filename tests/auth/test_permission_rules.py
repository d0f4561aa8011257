"""What a principal may do, as rules of `casefile.auth.permissions`: each role's permissions, an API
key's wildcards, and `write` never implying `read`. Pure rules: no database, no server. The same
rules through HTTP: test_api_keys.py (keys act with exactly their permissions, the grammar, no
/admin for keys, never more than the creator has), test_users.py and test_cases.py (what each role may do)."""

from __future__ import annotations

import pytest

from casefile.auth.permissions import ROLE_PERMISSIONS, Principal, is_valid_permission, key_permissions

# Written out here rather than read from the code under test.
RESOURCES = (
    "cases",
    "documents",
    "users",
    "webhooks",
    "config",
    "api_keys",
    "contacts",
    "conflicts",
    "audit",
)
# A conflict check and the audit log's proofs only read: there is no write or delete of them to hold.
EVERY = {f"{action}:{resource}" for action in ("read", "write", "delete") for resource in RESOURCES} - {
    "write:conflicts",
    "delete:conflicts",
    "write:audit",
    "delete:audit",
}
# Time and money (docs/billing.md#permissions): approving is its own action, of billing only.
BILLING = {"read:billing", "write:billing", "approve:billing", "read:trust", "write:trust"}
EVERY |= BILLING
CASE_WORK = {p for p in EVERY if p.endswith((":cases", ":documents", ":contacts"))} | {"read:conflicts"}
ROLES = {
    "admin": EVERY,
    "attorney": CASE_WORK | BILLING,
    "paralegal": CASE_WORK | {"read:billing", "write:billing", "read:trust"},
    "viewer": {"read:cases", "read:documents", "read:contacts"},
}


def user(role: str) -> Principal:
    return Principal(kind="user", id=f"user_{role}", role=role, permissions=ROLE_PERMISSIONS[role])


def key(*permissions: str) -> Principal:
    return Principal(kind="api_key", id="key_rules", permissions=frozenset(permissions))


def allowed(principal: Principal) -> set[str]:
    return {p for p in EVERY if principal.can(p)}


def test_the_roles_are_the_documented_ones() -> None:
    assert set(ROLE_PERMISSIONS) == set(ROLES)


@pytest.mark.parametrize("role", list(ROLES))
def test_a_user_may_do_what_the_role_grants(role: str) -> None:
    assert allowed(user(role)) == ROLES[role]


@pytest.mark.parametrize(
    ("held", "granted"),
    [
        (("*:*",), EVERY),
        (("*:cases",), {"read:cases", "write:cases", "delete:cases"}),
        (("read:*",), {f"read:{resource}" for resource in RESOURCES} | {"read:billing", "read:trust"}),
        (("write:cases",), {"write:cases"}),  # write does not imply read
        (("delete:documents",), {"delete:documents"}),  # nor does delete
        (("read:cases", "write:documents"), {"read:cases", "write:documents"}),
        ((), set()),
    ],
    ids=["everything", "all-on-cases", "read-anything", "write-only", "delete-only", "two", "none"],
)
def test_an_api_key_may_do_exactly_what_its_permissions_cover(
    held: tuple[str, ...], granted: set[str]
) -> None:
    assert allowed(key(*held)) == granted


def test_only_an_administrator_user_is_an_administrator() -> None:
    assert user("admin").is_admin_user
    assert not key("*:*").is_admin_user  # a key never reaches /admin, whatever it holds
    assert not any(user(role).is_admin_user for role in ROLES if role != "admin")


@pytest.mark.parametrize(
    "permission", ["read:cases", "write:documents", "*:cases", "read:*", "*:*", "delete:api_keys"]
)
def test_a_permission_is_an_action_and_a_resource(permission: str) -> None:
    assert is_valid_permission(permission)


@pytest.mark.parametrize(
    "permission", ["fly:cases", "read:planets", "read", "read:cases:x", "READ:cases", ":cases", "read:", ""]
)
def test_anything_else_is_no_permission(permission: str) -> None:
    assert not is_valid_permission(permission)


@pytest.mark.parametrize("role", list(ROLES))
def test_a_key_never_grants_more_than_its_creators_role(role: str) -> None:
    assert key_permissions(["*:*"], role) == ROLES[role]
    assert key_permissions(["read:*", "write:cases"], role) == ROLES[role] & (
        {p for p in EVERY if p.startswith("read:")} | {"write:cases"}
    )


def test_a_key_without_an_active_creator_grants_nothing() -> None:
    assert key_permissions(["*:*"], None) == frozenset()
