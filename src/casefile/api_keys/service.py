"""API keys: creation (the key is shown once; its format is in `tokens.py`), lookups, listing and
revocation."""

from __future__ import annotations

from sqlalchemy import column, select, table
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.api_keys.repository import API_KEY_LIST
from casefile.api_keys.schemas import ApiKeyCreate
from casefile.audit import service as audit
from casefile.auth import api_key_tokens as tokens
from casefile.auth.permissions import Principal
from casefile.clock import utcnow
from casefile.db import get_or_404
from casefile.errors import ErrorDetail, NotFound, ValidationFailed
from casefile.listing import ListQuery, Page, fetch_page
from casefile.models import ApiKey


async def create_api_key(session: AsyncSession, actor: Principal, body: ApiKeyCreate) -> tuple[ApiKey, str]:
    """Returns the stored key and the secret key string, which is never available again."""
    if body.expires_at is not None and body.expires_at <= utcnow():
        raise ValidationFailed.on("expires_at", "Expiry must be in the future")
    if body.case_ids:
        await _check_cases_exist(session, body.case_ids)
    prefix, key = tokens.new_key()
    api_key = ApiKey(
        name=body.name,
        prefix=prefix,
        key_hash=tokens.key_hash(key),
        permissions=body.permissions,
        case_ids=body.case_ids,
        expires_at=body.expires_at,
        created_by=actor.id,
    )
    session.add(api_key)
    await session.flush()
    audit.record(
        session,
        "api_key.created",
        resource_type="api_key",
        resource_id=api_key.id,
        details={"name": api_key.name, "prefix": prefix, "permissions": api_key.permissions},
    )
    return api_key, key


# The cases table as this lower layer sees it: keys only name cases, and the access rules that
# narrow a key to its creator's cases live with the cases (access/matter.py).
_CASES = table("cases", column("id"))


async def _check_cases_exist(session: AsyncSession, case_ids: list[str]) -> None:
    found = set(await session.scalars(select(_CASES.c.id).where(_CASES.c.id.in_(case_ids))))
    missing = [
        ErrorDetail(f"case_ids[{i}]", "No such case") for i, c in enumerate(case_ids) if c not in found
    ]
    if missing:
        raise NotFound.referenced(missing)


async def get_api_key(session: AsyncSession, key_id: str) -> ApiKey:
    return await get_or_404(session, ApiKey, key_id, "API key not found")


async def list_api_keys(session: AsyncSession, query: ListQuery) -> Page[ApiKey]:
    return await fetch_page(session, API_KEY_LIST, query)


async def revoke_api_key(session: AsyncSession, api_key: ApiKey) -> None:
    """Revoked at once; the row stays (with `revoked_at`) so operators can see what existed."""
    if api_key.revoked_at is None:
        api_key.revoked_at = utcnow()
        await session.flush()
        audit.record(session, "api_key.revoked", resource_type="api_key", resource_id=api_key.id)
