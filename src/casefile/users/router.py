from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse
from starlette.convertors import Convertor, register_url_convertor

from casefile import envelope
from casefile.access.visibility import IdOnlyOut
from casefile.auth.dependencies import UserPrincipal
from casefile.envelope import DeletedOut, Envelope, PageEnvelope
from casefile.listing import ListQuery, list_query
from casefile.request_scope import RuntimeDep, SessionDep
from casefile.users import repository, service
from casefile.users.dependencies import UserInPath, UsersDelete, UsersRead, UsersWrite
from casefile.users.repository import USER_LIST
from casefile.users.schemas import UserCreate, UserOut, UserUpdate

router = APIRouter(prefix="/users", tags=["users"])


class _UserId(Convertor[str]):
    """A user's id in a path: any segment but `me`, which is `/users/me`'s own path. So `/users/me`
    takes only its own methods (GET), and a PATCH or DELETE of it is 405 with `Allow: GET`, not
    "user 'me' not found" beside an `Allow` naming the methods of `/users/{user_id}`."""

    regex = "(?!me$)[^/]+"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("user_id", _UserId())

UserListQuery = Annotated[ListQuery, Depends(list_query(USER_LIST))]

# A handler with a body or a query string loads its path's row itself: see auth.dependencies.


@router.get("/me", response_model=Envelope[UserOut])
async def me(principal: UserPrincipal, session: SessionDep) -> JSONResponse:
    """The calling user."""
    return envelope.ok(UserOut.dump(await repository.get_user(session, principal.id)))


@router.get("", response_model=PageEnvelope[UserOut])
async def list_users(_: UsersRead, session: SessionDep, query: UserListQuery) -> JSONResponse:
    return envelope.listed(await service.list_users(session, query), query, UserOut.dump)


@router.post("", response_model=Envelope[UserOut | IdOnlyOut], status_code=201)
async def create_user(body: UserCreate, principal: UsersWrite, session: SessionDep) -> JSONResponse:
    """Create a user; an administrator needs an administrator's access token."""
    user = await service.create_user_for(session, principal, body)
    return envelope.created(UserOut.dump_for(user, principal))


@router.get("/{user_id:user_id}", response_model=Envelope[UserOut])
async def get_user(_: UsersRead, user: UserInPath) -> JSONResponse:
    return envelope.ok(UserOut.dump(user))


@router.patch("/{user_id:user_id}", response_model=Envelope[UserOut | IdOnlyOut])
async def update_user(
    user_id: str, body: UserUpdate, principal: UsersWrite, session: SessionDep, runtime: RuntimeDep
) -> JSONResponse:
    """Change name, role, active or password. Role and active changes emit `user.permissions_changed`;
    disabling a user or changing the password ends the user's sessions."""
    user = await repository.get_user(session, user_id)
    updated = await service.update_user(session, runtime, principal, user, body)
    return envelope.ok(UserOut.dump_for(updated, principal))


@router.delete("/{user_id:user_id}", response_model=Envelope[DeletedOut])
async def delete_user(principal: UsersDelete, user: UserInPath, session: SessionDep) -> JSONResponse:
    await service.delete_user(session, principal, user)
    return envelope.deleted(user.id)
