"""User endpoints (docs/api-conventions.md#users): admin-only management, roles, the last administrator."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import httpx

from tests.support.assertions import api_error, auth_error, details, ok
from tests.support.factories import unique
from tests.support.servers import ADMIN_EMAIL, ADMIN_PASSWORD, Api


def test_create_get_list_user(api: Api, admin: httpx.Client) -> None:
    email = f"{unique('Mixed.Case')}@Casefile.test"
    user = ok(
        admin.post("/users", json={"email": email, "name": "Ada", "password": "x" * 12, "role": "attorney"}),
        201,
    )
    assert user["id"].startswith("user_") and user["role"] == "attorney" and user["active"] is True
    assert set(user) == {"id", "email", "name", "role", "active", "created_at", "updated_at", "last_login_at"}
    assert ok(admin.get(f"/users/{user['id']}")) == user
    listed = admin.get("/users", params={"search": email.split("@", maxsplit=1)[0][:10], "limit": 5})
    assert user["id"] in [u["id"] for u in ok(listed)]
    stored = api.sql("SELECT password_hash FROM users WHERE id = :id", id=user["id"])[0][0]
    assert stored.startswith("$argon2id$")


def test_email_is_unique_whatever_its_case(admin: httpx.Client) -> None:
    email = f"{unique('dup')}@casefile.test"
    ok(admin.post("/users", json={"email": email, "name": "A", "password": "x" * 12}), 201)
    r = admin.post("/users", json={"email": email.upper(), "name": "B", "password": "x" * 12})
    assert details(api_error(r, 422, "VALIDATION_ERROR")) == {"email": "Email is already registered"}


def test_user_validation(admin: httpx.Client) -> None:
    r = admin.post("/users", json={"email": "not-an-email", "name": "", "password": "short", "role": "god"})
    assert set(details(api_error(r, 422, "VALIDATION_ERROR"))) == {"email", "name", "password", "role"}


def test_role_change_emits_permissions_changed(api: Api, admin: httpx.Client) -> None:
    user, _ = api.make_user("viewer")
    ok(admin.patch(f"/users/{user['id']}", json={"role": "attorney", "name": "Renamed"}))
    [event] = api.events("user.permissions_changed", user_id=user["id"])
    assert event["changes"] == {"role": {"from": "viewer", "to": "attorney"}}
    ok(admin.patch(f"/users/{user['id']}", json={"name": "Renamed again"}))  # not a permission change
    assert len(api.events("user.permissions_changed", user_id=user["id"])) == 1


def test_password_change_ends_sessions(api: Api, admin: httpx.Client) -> None:
    user, token = api.make_user("paralegal")
    ok(admin.patch(f"/users/{user['id']}", json={"password": "A-brand-new-passw0rd"}))
    with api.client(token=token) as c:
        auth_error(c.get("/users/me"), 401, "AUTH_001")
    assert api.login(user["email"], "A-brand-new-passw0rd")["token"]


def test_only_user_managers_manage_users(api: Api) -> None:
    _, token = api.make_user("attorney")
    with api.client(token=token) as c:
        auth_error(c.get("/users"), 403, "AUTH_010")
        auth_error(
            c.post("/users", json={"email": "a@b.test", "name": "x", "password": "x" * 12}), 403, "AUTH_010"
        )
        assert ok(c.get("/users/me"))["role"] == "attorney"
    key = api.make_key(["read:users"])
    with api.client(api_key=key["key"]) as c:
        assert ok(c.get("/users"))


def test_delete_user(api: Api, admin: httpx.Client) -> None:
    user, token = api.make_user("viewer")
    assert ok(admin.delete(f"/users/{user['id']}")) == {"id": user["id"], "deleted": True}
    api_error(admin.get(f"/users/{user['id']}"), 404, "NOT_FOUND")
    with api.client(token=token) as c:
        auth_error(c.get("/users/me"), 401, "AUTH_001")


def test_the_last_administrator_stays(make_server) -> None:
    server = make_server()
    with server.admin() as admin:
        me = ok(admin.get("/users/me"))
        assert me["email"] == ADMIN_EMAIL
        api_error(admin.patch(f"/users/{me['id']}", json={"role": "viewer"}), 409, "CONFLICT")
        api_error(admin.patch(f"/users/{me['id']}", json={"active": False}), 409, "CONFLICT")
        api_error(admin.delete(f"/users/{me['id']}"), 409, "CONFLICT")
        second, _ = server.make_user("admin")
        ok(admin.patch(f"/users/{second['id']}", json={"role": "viewer"}))  # another admin remains
    with server.admin() as admin:
        assert ok(admin.get("/users/me"))["role"] == "admin"


def test_missing_user_is_404(admin: httpx.Client) -> None:
    api_error(admin.get("/users/user_nope"), 404, "NOT_FOUND")
    api_error(admin.patch("/users/user_nope", json={"name": "x"}), 404, "NOT_FOUND")


def test_api_keys_cannot_touch_administrator_access(api: Api, admin: httpx.Client) -> None:
    """Creating an administrator, any role change, and an administrator's credentials or status
    need an administrator's own access token; a key with `*:users` gets AUTH_011."""
    key = api.make_key(["*:users"])["key"]
    target, _ = api.make_user("viewer")
    other_admin, _ = api.make_user("admin")
    me = ok(admin.get("/users/me"))
    with api.client(api_key=key) as c:
        body = {"email": f"{unique('escalate')}@casefile.test", "name": "E", "password": "x" * 12}
        auth_error(c.post("/users", json={**body, "role": "admin"}), 403, "AUTH_011")
        assert ok(c.post("/users", json=body), 201)["role"] == "viewer"  # others may still be made
        auth_error(c.patch(f"/users/{target['id']}", json={"role": "attorney"}), 403, "AUTH_011")
        auth_error(c.patch(f"/users/{target['id']}", json={"role": "admin"}), 403, "AUTH_011")
        for change in ({"password": "Taken-over-passw0rd"}, {"active": False}, {"role": "viewer"}):
            auth_error(c.patch(f"/users/{me['id']}", json=change), 403, "AUTH_011")
        auth_error(c.delete(f"/users/{other_admin['id']}"), 403, "AUTH_011")
        # What stays open to a key: names, and a non-administrator's password and status.
        renamed = ok(c.patch(f"/users/{target['id']}", json={"name": "Renamed", "active": False}))
        assert renamed["active"] is False
        ok(c.patch(f"/users/{target['id']}", json={"password": "A-fresh-passw0rd-1"}))
        ok(c.patch(f"/users/{other_admin['id']}", json={"name": "Still an administrator"}))
    assert ok(admin.get(f"/users/{target['id']}"))["role"] == "viewer"
    assert ok(admin.get(f"/users/{other_admin['id']}"))["role"] == "admin"
    assert api.login()["user"]["role"] == "admin"  # the administrator's password is unchanged
    ok(admin.patch(f"/users/{target['id']}", json={"role": "attorney"}))  # an administrator may


def test_a_user_write_answer_shows_no_more_than_the_caller_may_read(api: Api) -> None:
    key = api.make_key(["write:users"])["key"]
    with api.client(api_key=key) as c:
        body = {"email": f"{unique('blind')}@casefile.test", "name": "Blind", "password": "x" * 12}
        made = ok(c.post("/users", json=body), 201)
        assert made == {"id": made["id"]} and made["id"].startswith("user_")
        assert ok(c.patch(f"/users/{made['id']}", json={"name": "Renamed"})) == {"id": made["id"]}


def test_two_administrators_demoting_each_other_at_once_leave_one(make_server) -> None:
    # Each request alone is allowed (another administrator remains); both together would leave
    # none. The count of active administrators is taken under a lock, so the second one waits,
    # then sees the first.
    server = make_server()
    with server.admin() as admin:
        first = ok(admin.get("/users/me"))
    second, second_token = server.make_user("admin")
    tokens = {first["id"]: server.admin_token, second["id"]: second_token}
    clients = {user_id: server.client(token=token) for user_id, token in tokens.items()}
    others = {first["id"]: second["id"], second["id"]: first["id"]}
    try:
        for round_number in range(10):
            change = {"role": "viewer"} if round_number % 2 else {"active": False}

            def demote_other(user_id: str, change: dict[str, object] = change) -> httpx.Response:
                return clients[user_id].patch(f"/users/{others[user_id]}", json=change)

            for client in clients.values():
                ok(client.get("/users/me"))  # connections open, so the two PATCHes race
            with ThreadPoolExecutor(2) as pool:
                responses = list(pool.map(demote_other, list(clients)))
            statuses = sorted(r.status_code for r in responses)
            assert statuses[0] == 200 and statuses[1] in (401, 403, 409), [r.text for r in responses]
            admins = server.sql("SELECT id FROM users WHERE role = 'admin' AND active = :yes", yes=True)
            assert len(admins) == 1, responses
            # The remaining administrator restores the other for the next round.
            survivor = admins[0][0]
            ok(clients[survivor].patch(f"/users/{others[survivor]}", json={"role": "admin", "active": True}))
            if "active" in change:  # disabling ended the other's sessions: sign in again
                email = first["email"] if others[survivor] == first["id"] else second["email"]
                password = ADMIN_PASSWORD if others[survivor] == first["id"] else "User-Passw0rd-123"
                clients[others[survivor]].close()
                clients[others[survivor]] = server.client(token=server.login(email, password)["token"])
    finally:
        for client in clients.values():
            client.close()
