from __future__ import annotations

from pydantic import BaseModel, Field

from casefile.schemas import InModel
from casefile.users.schemas import UserOut


class LoginRequest(InModel):
    email: str = Field(min_length=1, max_length=320)
    password: str = Field(min_length=1, max_length=1024)


class RefreshRequest(InModel):
    refresh_token: str = Field(min_length=1, max_length=200)


class TokenOut(BaseModel):
    token: str
    token_type: str = "Bearer"  # noqa: S105 (the scheme name, not a secret)
    expires_in: int = Field(description="Seconds until the access token expires")
    expires_at: int = Field(description="Unix time at which the access token expires")
    refresh_token: str
    user: UserOut


class LogoutOut(BaseModel):
    logged_out: bool
