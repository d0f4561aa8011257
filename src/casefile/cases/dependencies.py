"""What the cases endpoints depend on: the permissions on cases, and the case a path names.
(The order of parameters matters: see `casefile.auth.dependencies`.)"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends

from casefile.auth.dependencies import Require, in_path
from casefile.auth.permissions import Permission, Principal
from casefile.cases.models import Case
from casefile.cases.repository import get_case

CasesRead = Annotated[Principal, Depends(Require(Permission.READ_CASES))]
CasesWrite = Annotated[Principal, Depends(Require(Permission.WRITE_CASES))]
CasesDelete = Annotated[Principal, Depends(Require(Permission.DELETE_CASES))]
CaseInPath = Annotated[Case, Depends(in_path(get_case, "case_id"))]
