"""Administration: the configuration in effect (`GET /admin/config`) and a form that changes it
(`PATCH /admin/config`'s service: validated as a whole, audited as `config.updated`, in effect at
once in every process). Only the fields whose value the form changes are sent, so a value still
at its default stays a default (it follows the server's settings).

No lost updates: the form carries the configuration it was loaded with (`loaded`), and only what
this administrator changed in it is sent. Where someone else changed one of those same values since
the form was loaded, nothing is saved: the page shows their value beside this one, and saving again
overwrites deliberately (the form then carries the current configuration)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.datastructures import FormData

from casefile.auth.dependencies import AdminPrincipal
from casefile.config import service as config_service
from casefile.config.schemas import ConfigOut, ConfigPatch
from casefile.error_handlers import validated
from casefile.errors import ValidationFailed
from casefile.request_scope import RuntimeDep, SessionDep
from casefile.storage.sniff import SUPPORTED_TYPES
from casefile.web.forms import text
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


def _flat(patch: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """A patch as dotted names and values (the maintenance window is one value)."""
    flat: dict[str, Any] = {}
    for name, value in patch.items():
        if isinstance(value, dict) and name != "maintenance":
            flat.update(_flat(value, f"{prefix}{name}."))
        else:
            flat[f"{prefix}{name}"] = value
    return flat


def _loaded(form: FormData, current: dict[str, Any]) -> dict[str, Any]:
    """The configuration the form was loaded with; the current one for a form without it."""
    try:
        loaded = json.loads(text(form, "loaded"))
    except ValueError:
        return current
    return loaded if isinstance(loaded, dict) and loaded.keys() == current.keys() else current


def _overwrite(value: str) -> dict[str, Any]:
    try:
        patch = json.loads(value)
    except ValueError:
        raise ValidationFailed.on("overwrite", "Not a set of changes") from None
    if not isinstance(patch, dict):
        raise ValidationFailed.on("overwrite", "Not a set of changes")
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
    context = _form_context(current)
    return render(request, "admin_config.html", context, me=await viewer(session, principal), nav="admin")


def _form_context(current: ConfigOut, **extra: Any) -> dict[str, Any]:
    maintenance = current.maintenance
    return {
        "config": current,
        "loaded": json.dumps(_current(current), sort_keys=True),
        "types": sorted(SUPPORTED_TYPES),
        "start": maintenance.scheduled_start.astimezone(UTC).strftime(MAINTENANCE_TIME)
        if maintenance.scheduled_start
        else "",
        "end": maintenance.scheduled_end.astimezone(UTC).strftime(MAINTENANCE_TIME)
        if maintenance.scheduled_end
        else "",
        "section": "config",
        "clashes": [],
        **extra,
    }


@router.post("/app/admin/config")
async def change_config(
    request: Request, principal: AdminChanger, session: SessionDep, runtime: RuntimeDep
) -> Response:
    config = await config_service.describe(session, runtime.settings)
    current = _current(config)
    form = await request.form()
    if overwrite := text(form, "overwrite"):
        # "Overwrite with my changes", after a clash: this administrator's changes, as sent before.
        patch = _overwrite(overwrite)
    else:
        loaded = _loaded(form, current)
        patch = _changes(loaded, _asked(form))
        theirs = _flat(_changes(loaded, current))
        clashes = [(name, theirs[name], mine) for name, mine in _flat(patch).items() if name in theirs]
        if clashes:
            # Someone else changed these values since this form was loaded: show both, save nothing.
            context = _form_context(config, clashes=clashes, mine=json.dumps(patch, sort_keys=True))
            me = await viewer(session, principal)
            return render(request, "admin_config.html", context, me=me, nav="admin", status_code=409)
    if patch:
        await config_service.update(session, runtime.settings, principal, validated(ConfigPatch, patch))
    return RedirectResponse(f"/app/admin/config?saved={len(patch)}", status_code=303)
