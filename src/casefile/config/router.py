from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from casefile import envelope
from casefile.auth.dependencies import AdminPrincipal
from casefile.config import service
from casefile.config.schemas import ConfigOut, ConfigPatch
from casefile.envelope import Envelope
from casefile.request_scope import RuntimeDep, SessionDep

# Mounted under /admin, whose router already demands an administrator's access token.
router = APIRouter(prefix="/config", tags=["system configuration"])


@router.get("", response_model=Envelope[ConfigOut])
async def get_config(session: SessionDep, runtime: RuntimeDep) -> JSONResponse:
    """The configuration in effect: what administrators set, and the settings' values elsewhere."""
    return envelope.ok((await service.describe(session, runtime.settings)).model_dump(mode="json"))


@router.patch("", response_model=Envelope[ConfigOut])
async def patch_config(
    body: ConfigPatch, admin: AdminPrincipal, session: SessionDep, runtime: RuntimeDep
) -> JSONResponse:
    """Change some fields; null returns a field to its default. Takes effect at once in every
    process. Setting a maintenance window emits `system.maintenance_scheduled`."""
    updated = await service.update(session, runtime.settings, admin, body)
    return envelope.ok(updated.model_dump(mode="json"))
