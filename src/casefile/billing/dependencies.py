"""The billing permissions as dependencies (listed first on a path, before the case it names)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends
from sqlalchemy import Select, select

from casefile.access.matter import visible_to
from casefile.auth.dependencies import Require
from casefile.auth.permissions import Permission, Principal
from casefile.models import Case

BillingRead = Annotated[Principal, Depends(Require(Permission.READ_BILLING))]
BillingWrite = Annotated[Principal, Depends(Require(Permission.WRITE_BILLING))]
BillingApprove = Annotated[Principal, Depends(Require(Permission.APPROVE_BILLING))]


def visible_cases(principal: Principal) -> Select[tuple[str]]:
    """The ids of the cases the caller may see, for lists across matters."""
    return select(Case.id).where(visible_to(principal))  # type: ignore[return-value]
