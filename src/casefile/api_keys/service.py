"""API keys: `cf_<prefix>_<secret>`, shown once, stored as a SHA-256 hash (the key carries 256
random bits, so a slow password hash would add nothing but latency to every request)."""

from __future__ import annotations

import secrets

from sqlalchemy.ext.asyncio import AsyncSession

from casefile.api_keys.models import ApiKey
from casefile.api_keys.schemas import ApiKeyCreate, ApiKeyOut
from casefile.auth.permissions import Principal
from casefile.auth.service import API_KEY_SCHEME, hash_token
from casefile.clock import utcnow
from casefile.errors import NotFound, ValidationFailed
from casefile.listing import ListQuery, ListSpec, fetch_page

_PREFIX_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567"

API_KEY_LIST = ListSpec(
    model=ApiKey,
    sortable={"created_at": ApiKey.created_at, "name": ApiKey.name, "expires_at": ApiKey.expires_at},
    default_sort="created_at",
    tiebreak=ApiKey.id,
    output_fields=frozenset(ApiKeyOut.model_fields),
)


async def create_api_key(session: AsyncSession, actor: Principal, body: ApiKeyCreate) -> tuple[ApiKey, str]:
    """Returns the stored key and the secret key string, which is never available again."""
    if body.expires_at is not None and body.expires_at <= utcnow():
        raise ValidationFailed.on("expires_at", "Expiry must be in the future")
    prefix = "".join(secrets.choice(_PREFIX_ALPHABET) for _ in range(12))
    key = f"{API_KEY_SCHEME}_{prefix}_{secrets.token_urlsafe(32)}"
    api_key = ApiKey(
        name=body.name,
        prefix=prefix,
        key_hash=hash_token(key),
        permissions=body.permissions,
        expires_at=body.expires_at,
        created_by=actor.id,
    )
    session.add(api_key)
    await session.flush()
    return api_key, key


async def get_api_key(session: AsyncSession, key_id: str) -> ApiKey:
    api_key = await session.get(ApiKey, key_id)
    if api_key is None:
        raise NotFound("API key not found")
    return api_key


async def list_api_keys(session: AsyncSession, query: ListQuery) -> tuple[list[ApiKey], int]:
    return await fetch_page(session, API_KEY_LIST, query)


async def revoke_api_key(session: AsyncSession, key_id: str) -> None:
    """Revoked at once; the row stays (with `revoked_at`) so operators can see what existed."""
    api_key = await get_api_key(session, key_id)
    if api_key.revoked_at is None:
        api_key.revoked_at = utcnow()
        await session.flush()
