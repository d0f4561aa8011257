"""Administration: users (create, change a role, disable or enable), through the services of
`POST /users` and `PATCH /users/{id}` with their rules (only an administrator's own session makes
or changes an administrator or a role; the last active administrator stays)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError

from casefile.auth.permissions import Permission
from casefile.error_handlers import validation_details
from casefile.errors import ValidationFailed, permission_missing
from casefile.listing import build_list_query
from casefile.request_scope import RuntimeDep, SessionDep
from casefile.users import service as users_service
from casefile.users.dependencies import UserInPath, UsersRead
from casefile.users.repository import USER_LIST
from casefile.users.schemas import Role, UserCreate, UserUpdate
from casefile.web.security import Changer
from casefile.web.templating import render, viewer

router = APIRouter(include_in_schema=False)

ROLES: tuple[str, ...] = Role.__args__  # type: ignore[attr-defined]


def _validated(model: type[UserCreate] | type[UserUpdate], values: dict[str, Any]) -> Any:
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        raise ValidationFailed(details=validation_details(exc.errors())) from None


@router.get("/app/admin/users")
async def users(request: Request, principal: UsersRead, session: SessionDep) -> HTMLResponse:
    me = await viewer(session, principal)
    page = await users_service.list_users(
        session, build_list_query(USER_LIST, {"limit": "100", "sort": "name", "order": "asc"})
    )
    context = {
        "users": page.rows,
        "roles": ROLES,
        "can_write": principal.can(Permission.WRITE_USERS),
        "section": "users",
    }
    return render(request, "admin_users.html", context, me=me, nav="admin")


@router.post("/app/admin/users")
async def create_user(request: Request, principal: Changer, session: SessionDep) -> Response:
    if not principal.can(Permission.WRITE_USERS):
        raise permission_missing(Permission.WRITE_USERS)
    form = await request.form()
    values = {name: str(form.get(name) or "").strip() for name in ("email", "name", "role")}
    values["password"] = str(form.get("password") or "")
    await users_service.create_user_for(session, principal, _validated(UserCreate, values))
    return RedirectResponse("/app/admin/users?created=1", status_code=303)


@router.post("/app/admin/users/{user_id}")
async def change_user(
    request: Request, principal: Changer, user: UserInPath, session: SessionDep, runtime: RuntimeDep
) -> Response:
    """A role (`role`) or the status (`active`: "true" or "false"), as `PATCH /users/{id}`."""
    if not principal.can(Permission.WRITE_USERS):
        raise permission_missing(Permission.WRITE_USERS)
    form = await request.form()
    values: dict[str, Any] = {}
    if "role" in form:
        values["role"] = str(form.get("role"))
    if "active" in form:
        # A form says it as text; the API's body is a JSON boolean (strict).
        values["active"] = {"true": True, "false": False}.get(
            str(form.get("active")), str(form.get("active"))
        )
    await users_service.update_user(session, runtime, principal, user, _validated(UserUpdate, values))
    return RedirectResponse("/app/admin/users?saved=1", status_code=303)
