from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from casefile import envelope
from casefile.auth import service
from casefile.auth.dependencies import CurrentUser, LimitByClientIp, RuntimeDep, SessionDep
from casefile.auth.schemas import LoginRequest, LogoutOut, RefreshRequest, TokenOut
from casefile.envelope import Envelope
from casefile.users.schemas import UserOut

router = APIRouter(prefix="/auth", tags=["auth"])


def _tokens(issued: service.IssuedTokens) -> JSONResponse:
    return envelope.ok(
        TokenOut(
            token=issued.access_token,
            expires_in=issued.expires_in,
            expires_at=issued.expires_at_epoch,
            refresh_token=issued.refresh_token,
            user=UserOut.model_validate(issued.user),
        ).model_dump(mode="json")
    )


@router.post("/login", response_model=Envelope[TokenOut], dependencies=[LimitByClientIp])
async def login(body: LoginRequest, session: SessionDep, runtime: RuntimeDep) -> JSONResponse:
    """Exchange email and password for an access token (JWT) and a refresh token."""
    return _tokens(await service.login(session, runtime, email=body.email, password=body.password))


@router.post("/refresh", response_model=Envelope[TokenOut], dependencies=[LimitByClientIp])
async def refresh(body: RefreshRequest, session: SessionDep, runtime: RuntimeDep) -> JSONResponse:
    """Exchange a refresh token (single use) for a new access token and a new refresh token."""
    return _tokens(await service.refresh(session, runtime, refresh_token=body.refresh_token))


@router.post("/logout", response_model=Envelope[LogoutOut])
async def logout(principal: CurrentUser, session: SessionDep, runtime: RuntimeDep) -> JSONResponse:
    """End the session: its access tokens and refresh tokens stop working at once."""
    await service.logout(session, runtime, principal)
    return envelope.ok({"logged_out": True})
