from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from casefile import envelope
from casefile.api_keys import service
from casefile.api_keys.dependencies import ApiKeyInPath
from casefile.api_keys.repository import API_KEY_LIST
from casefile.api_keys.schemas import ApiKeyCreate, ApiKeyCreated, ApiKeyOut
from casefile.auth.dependencies import AdminPrincipal
from casefile.envelope import DeletedOut, Envelope, PageEnvelope
from casefile.listing import ListQuery, list_query
from casefile.request_scope import SessionDep

# Mounted under /admin, whose router already demands an administrator's access token.
router = APIRouter(prefix="/api-keys", tags=["api keys"])

ApiKeyListQuery = Annotated[ListQuery, Depends(list_query(API_KEY_LIST))]


@router.post("", response_model=Envelope[ApiKeyCreated], status_code=201)
async def create_api_key(body: ApiKeyCreate, admin: AdminPrincipal, session: SessionDep) -> JSONResponse:
    """Create a key. The `key` is in this answer only; it is stored hashed."""
    api_key, key = await service.create_api_key(session, admin, body)
    return envelope.created({**ApiKeyOut.dump(api_key), "key": key})


@router.get("", response_model=PageEnvelope[ApiKeyOut])
async def list_api_keys(session: SessionDep, query: ApiKeyListQuery) -> JSONResponse:
    return envelope.listed(await service.list_api_keys(session, query), query, ApiKeyOut.dump)


@router.get("/{key_id}", response_model=Envelope[ApiKeyOut])
async def get_api_key(api_key: ApiKeyInPath) -> JSONResponse:
    return envelope.ok(ApiKeyOut.dump(api_key))


@router.delete("/{key_id}", response_model=Envelope[DeletedOut])
async def revoke_api_key(api_key: ApiKeyInPath, session: SessionDep) -> JSONResponse:
    """Revoke the key at once."""
    await service.revoke_api_key(session, api_key)
    return envelope.deleted(api_key.id)
