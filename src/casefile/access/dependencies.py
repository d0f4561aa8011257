"""The permissions on cases and documents, and the case or document a path names as the caller may
see it (`access.matter`): every domain whose paths hang off a case or a document takes them from
here. (The order of parameters matters: see `casefile.auth.dependencies`.)"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import Depends

from casefile.access.matter import Level, case_for, document_for
from casefile.auth.dependencies import CurrentPrincipal, Require
from casefile.auth.permissions import Permission, Principal
from casefile.models import Case, Document
from casefile.request_scope import SessionDep

CasesRead = Annotated[Principal, Depends(Require(Permission.READ_CASES))]
CasesWrite = Annotated[Principal, Depends(Require(Permission.WRITE_CASES))]
CasesDelete = Annotated[Principal, Depends(Require(Permission.DELETE_CASES))]
DocumentsRead = Annotated[Principal, Depends(Require(Permission.READ_DOCUMENTS))]
DocumentsWrite = Annotated[Principal, Depends(Require(Permission.WRITE_DOCUMENTS))]
DocumentsDelete = Annotated[Principal, Depends(Require(Permission.DELETE_DOCUMENTS))]


def case_in_path(level: Level) -> Callable[..., Awaitable[Case]]:
    """Dependency: the case of `{case_id}` if the caller may see it (else 404) with `level` on it
    (else 403)."""

    async def dependency(principal: CurrentPrincipal, session: SessionDep, case_id: str) -> Case:
        return await case_for(session, principal, case_id, level)

    return dependency


def document_in_path(level: Level) -> Callable[..., Awaitable[Document]]:
    """Dependency: the document of `{document_id}` if the caller may see its case (else 404
    "Document not found") with `level` on it (else 403)."""

    async def dependency(principal: CurrentPrincipal, session: SessionDep, document_id: str) -> Document:
        return await document_for(session, principal, document_id, level)

    return dependency


CaseInPath = Annotated[Case, Depends(case_in_path(Level.READ))]
CaseToWrite = Annotated[Case, Depends(case_in_path(Level.WRITE))]
CaseToManage = Annotated[Case, Depends(case_in_path(Level.MANAGE))]
DocumentInPath = Annotated[Document, Depends(document_in_path(Level.READ))]
DocumentToWrite = Annotated[Document, Depends(document_in_path(Level.WRITE))]
