"""What the conflict-check endpoints depend on: their permission."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends

from casefile.auth.dependencies import Require
from casefile.auth.permissions import Permission, Principal

ConflictsRead = Annotated[Principal, Depends(Require(Permission.READ_CONFLICTS))]
