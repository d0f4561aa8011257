"""Administration: the configuration in effect (`GET /admin/config`) and a form that changes it
(`PATCH /admin/config`'s service: validated as a whole, audited as `config.updated`, in effect at
once in every process). Only the fields whose value the form changes are sent, so a value still
at its default stays a default (it follows the server's settings)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from starlette.datastructures import FormData

from casefile.auth.dependencies import AdminPrincipal
from casefile.config import service as config_service
from casefile.config.schemas import ConfigOut, ConfigPatch
from casefile.errors import ValidationFailed
from casefile.request_scope import RuntimeDep, SessionDep
from casefile.storage.sniff import SUPPORTED_TYPES
from casefile.web.forms import text, validated
from casefile.web.security import AdminChanger
from casefile.web.templating import render, viewer

router = APIRouter(include_in_schema=False)

MAINTENANCE_TIME = "%Y-%m-%dT%H:%M"  # an <input type="datetime-local">, read as UTC


def _number(form: FormData, name: str, kind: type[int] | type[float]) -> int | float:
    try:
        return kind(text(form, name))
    except ValueError:
        raise ValidationFailed.on(name, "Give a number" if kind is float else "Give a whole number") from None


def _time(form: FormData, name: str) -> str | None:
    value = text(form, name)
    if not value:
        return None
    try:
        return datetime.strptime(value[:16], MAINTENANCE_TIME).replace(tzinfo=UTC).isoformat()
    except ValueError:
        raise ValidationFailed.on(name, "Give a date and time") from None


def _asked(form: FormData) -> dict[str, Any]:
    """The whole configuration as the form states it, shaped as the API's body."""
    return {
        "maintenance": {
            "scheduled_start": _time(form, "maintenance_start"),
            "scheduled_end": _time(form, "maintenance_end"),
            "message": text(form, "maintenance_message") or None,
        },
        "uploads": {
            "max_size_bytes": _number(form, "max_size_bytes", int),
            "allowed_types": sorted(t for t in form.getlist("allowed_type") if isinstance(t, str)),
        },
        "ai": {"enabled": form.get("ai_enabled") == "true"},
        "webhooks": {
            "default_retry_policy": {
                "max_attempts": _number(form, "max_attempts", int),
                "backoff_multiplier": _number(form, "backoff_multiplier", float),
                "initial_delay": _number(form, "initial_delay", int),
            }
        },
        "retention": {"trash_days": _number(form, "trash_days", int)},
    }


def _changes(current: dict[str, Any], asked: dict[str, Any]) -> dict[str, Any]:
    """The fields of `asked` that differ from `current`, nested as they are (the maintenance
    window as a whole: all three empty clear it)."""
    patch: dict[str, Any] = {}
    for name, value in asked.items():
        if name == "maintenance":
            if value != current[name]:
                patch[name] = value if any(value.values()) else None
        elif isinstance(value, dict):
            if changed := _changes(current[name], value):
                patch[name] = changed
        elif value != current[name]:
            patch[name] = value
    return patch


def _current(config: ConfigOut) -> dict[str, Any]:
    data = config.model_dump(mode="json")
    for name in ("scheduled_start", "scheduled_end"):
        value = data["maintenance"][name]
        data["maintenance"][name] = (
            datetime.fromisoformat(value).astimezone(UTC).isoformat() if value else None
        )
    data["uploads"]["allowed_types"] = sorted(data["uploads"]["allowed_types"])
    return data


@router.get("/app/admin/config")
async def config(
    request: Request, principal: AdminPrincipal, session: SessionDep, runtime: RuntimeDep
) -> HTMLResponse:
    current = await config_service.describe(session, runtime.settings)
    maintenance = current.maintenance
    context = {
        "config": current,
        "types": sorted(SUPPORTED_TYPES),
        "start": maintenance.scheduled_start.astimezone(UTC).strftime(MAINTENANCE_TIME)
        if maintenance.scheduled_start
        else "",
        "end": maintenance.scheduled_end.astimezone(UTC).strftime(MAINTENANCE_TIME)
        if maintenance.scheduled_end
        else "",
        "section": "config",
    }
    return render(request, "admin_config.html", context, me=await viewer(session, principal), nav="admin")


@router.post("/app/admin/config")
async def change_config(
    request: Request, principal: AdminChanger, session: SessionDep, runtime: RuntimeDep
) -> RedirectResponse:
    current = _current(await config_service.describe(session, runtime.settings))
    patch = _changes(current, _asked(await request.form()))
    if patch:
        await config_service.update(session, runtime.settings, principal, validated(ConfigPatch, patch))
    return RedirectResponse(f"/app/admin/config?saved={len(patch)}", status_code=303)
