from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from casefile import envelope
from casefile.auth.dependencies import CurrentUser, Require, RuntimeDep, SessionDep
from casefile.auth.permissions import Principal
from casefile.envelope import DeletedOut, Envelope, PageEnvelope
from casefile.listing import ListQuery, list_query
from casefile.users import service
from casefile.users.schemas import UserCreate, UserOut, UserUpdate

router = APIRouter(prefix="/users", tags=["users"])

UsersRead = Annotated[Principal, Depends(Require("read:users"))]
UsersWrite = Annotated[Principal, Depends(Require("write:users"))]
UsersDelete = Annotated[Principal, Depends(Require("delete:users"))]
UserListQuery = Annotated[ListQuery, Depends(list_query(service.USER_LIST))]


@router.get("/me", response_model=Envelope[UserOut])
async def me(principal: CurrentUser, session: SessionDep) -> JSONResponse:
    """The calling user."""
    return envelope.ok(UserOut.dump(await service.get_user(session, principal.id)))


@router.get("", response_model=PageEnvelope[UserOut])
async def list_users(_: UsersRead, session: SessionDep, query: UserListQuery) -> JSONResponse:
    users, total = await service.list_users(session, query)
    return envelope.paginated(
        [UserOut.dump(u) for u in users], page=query.page, limit=query.limit, total=total
    )


@router.post("", response_model=Envelope[UserOut], status_code=201)
async def create_user(body: UserCreate, _: UsersWrite, session: SessionDep) -> JSONResponse:
    user = await service.create_user(
        session, email=body.email, name=body.name, password=body.password, role=body.role
    )
    return envelope.created(UserOut.dump(user))


@router.get("/{user_id}", response_model=Envelope[UserOut])
async def get_user(user_id: str, _: UsersRead, session: SessionDep) -> JSONResponse:
    return envelope.ok(UserOut.dump(await service.get_user(session, user_id)))


@router.patch("/{user_id}", response_model=Envelope[UserOut])
async def update_user(
    user_id: str, body: UserUpdate, principal: UsersWrite, session: SessionDep, runtime: RuntimeDep
) -> JSONResponse:
    """Change name, role, active or password. Role and active changes emit `user.permissions_changed`;
    disabling a user or changing the password ends the user's sessions."""
    user = await service.update_user(session, runtime, principal, user_id, body)
    return envelope.ok(UserOut.dump(user))


@router.delete("/{user_id}", response_model=Envelope[DeletedOut])
async def delete_user(user_id: str, principal: UsersDelete, session: SessionDep) -> JSONResponse:
    await service.delete_user(session, principal, user_id)
    return envelope.deleted(user_id)
