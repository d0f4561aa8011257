"""Reading and changing the runtime configuration. `load` is called where a value is used (one
primary-key read), so there is no cache to go stale between processes."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.audit import service as audit
from casefile.auth.permissions import Principal
from casefile.clock import utcnow
from casefile.config.schemas import DEFAULT_TRASH_DAYS, Config, ConfigOut, ConfigPatch, RetryPolicy
from casefile.error_handlers import validation_details
from casefile.errors import ValidationFailed
from casefile.events import payloads
from casefile.events.outbox import emit
from casefile.models import CONFIG_ROW_ID, SystemConfig
from casefile.settings import Settings
from casefile.storage.sniff import SUPPORTED_TYPES


def defaults(settings: Settings) -> dict[str, Any]:
    """What applies where an administrator has set nothing: the process's settings."""
    return {
        "maintenance": {"scheduled_start": None, "scheduled_end": None, "message": None},
        "uploads": {"max_size_bytes": settings.max_upload_bytes, "allowed_types": sorted(SUPPORTED_TYPES)},
        "ai": {"enabled": settings.ai_enabled},
        "webhooks": {"default_retry_policy": RetryPolicy().model_dump()},
        "retention": {"trash_days": DEFAULT_TRASH_DAYS},
    }


def _effective(settings: Settings, overrides: dict[str, Any]) -> dict[str, Any]:
    merged = defaults(settings)
    for section, values in overrides.items():
        if section in merged and isinstance(values, dict):
            merged[section] = {**merged[section], **values}
    return merged


async def _row(session: AsyncSession, *, for_update: bool = False) -> SystemConfig:
    row = await session.get(SystemConfig, CONFIG_ROW_ID, with_for_update=for_update)
    if row is None:  # created by the migration; recreated here if someone deleted it
        row = SystemConfig(id=CONFIG_ROW_ID, overrides={})
        session.add(row)
        await session.flush()
    return row


async def load(session: AsyncSession, settings: Settings) -> Config:
    row = await session.get(SystemConfig, CONFIG_ROW_ID)
    return Config.model_validate(_effective(settings, row.overrides if row else {}))


async def describe(session: AsyncSession, settings: Settings) -> ConfigOut:
    row = await session.get(SystemConfig, CONFIG_ROW_ID)
    effective = _effective(settings, row.overrides if row else {})
    return ConfigOut.model_validate(
        {
            **effective,
            "updated_at": row.updated_at if row else None,
            "updated_by": row.updated_by if row else None,
        }
    )


async def update(
    session: AsyncSession, settings: Settings, actor: Principal, patch: ConfigPatch
) -> ConfigOut:
    row = await _row(session, for_update=True)
    before = Config.model_validate(_effective(settings, row.overrides))
    overrides = _apply(row.overrides, patch.model_dump(mode="json", exclude_unset=True))
    try:
        after = Config.model_validate(_effective(settings, overrides))
    except ValidationError as exc:
        raise ValidationFailed(
            "The configuration is not valid", details=validation_details(exc.errors())
        ) from exc
    now = utcnow()
    row.overrides = overrides
    row.updated_at = now
    row.updated_by = actor.actor_id
    await session.flush()
    audit.record(
        session,
        "config.updated",
        resource_type="config",
        details={"changes": patch.model_dump(mode="json", exclude_unset=True)},
    )
    if after.maintenance.scheduled_start is not None and after.maintenance != before.maintenance:
        await emit(
            session,
            "system.maintenance_scheduled",
            payloads.system_maintenance_scheduled(after.maintenance.model_dump(mode="json"), actor.actor_id),
        )
    return ConfigOut.model_validate({**after.model_dump(), "updated_at": now, "updated_by": actor.actor_id})


def _apply(overrides: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """Fields given replace the stored ones; null removes the override (back to the default).
    The retry policy is merged field by field, as a webhook's own retry policy is."""
    result = {section: dict(values) for section, values in overrides.items()}
    for section, fields in patch.items():
        if fields is None:
            result.pop(section, None)
            continue
        stored = result.setdefault(section, {})
        for name, value in fields.items():
            if value is None:
                stored.pop(name, None)
            elif isinstance(value, dict):
                nested = {k: v for k, v in value.items() if v is not None}
                stored[name] = {**stored.get(name, {}), **nested}
            else:
                stored[name] = value
        if not stored:
            result.pop(section)
    return result
