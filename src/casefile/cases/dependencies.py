"""What the cases endpoints depend on: the permissions on cases, and the case a path names, as
the caller may see it (cases/access.py). (The order of parameters matters: see
`casefile.auth.dependencies`.)"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import Depends

from casefile.auth.dependencies import CurrentPrincipal, Require, SessionDep
from casefile.auth.permissions import Permission, Principal
from casefile.cases.access import Level, case_for
from casefile.cases.models import Case

CasesRead = Annotated[Principal, Depends(Require(Permission.READ_CASES))]
CasesWrite = Annotated[Principal, Depends(Require(Permission.WRITE_CASES))]
CasesDelete = Annotated[Principal, Depends(Require(Permission.DELETE_CASES))]


def case_in_path(level: Level) -> Callable[..., Awaitable[Case]]:
    """Dependency: the case of `{case_id}` if the caller may see it (else 404) with `level` on it
    (else 403)."""

    async def dependency(principal: CurrentPrincipal, session: SessionDep, case_id: str) -> Case:
        return await case_for(session, principal, case_id, level)

    return dependency


CaseInPath = Annotated[Case, Depends(case_in_path(Level.READ))]
CaseToWrite = Annotated[Case, Depends(case_in_path(Level.WRITE))]
CaseToManage = Annotated[Case, Depends(case_in_path(Level.MANAGE))]
