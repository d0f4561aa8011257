"""What the users endpoints depend on: the permissions on users, and the user a path names (not
to be confused with the caller, a `Principal`). (The order of parameters matters: see
`casefile.auth.dependencies`.)"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends

from casefile.auth.dependencies import Require
from casefile.auth.permissions import Permission, Principal
from casefile.models import User
from casefile.request_scope import in_path
from casefile.users.repository import get_user

UsersRead = Annotated[Principal, Depends(Require(Permission.READ_USERS))]
UsersWrite = Annotated[Principal, Depends(Require(Permission.WRITE_USERS))]
UsersDelete = Annotated[Principal, Depends(Require(Permission.DELETE_USERS))]
UserInPath = Annotated[User, Depends(in_path(get_user, "user_id"))]
