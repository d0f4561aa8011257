"""What the documents endpoints depend on: the permissions on documents, and the document a path
names, as the caller may see it (its case's access, cases/access.py). (The order of parameters
matters: see `casefile.auth.dependencies`.)"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import Depends

from casefile.auth.dependencies import CurrentPrincipal, Require, SessionDep
from casefile.auth.permissions import Permission, Principal
from casefile.cases.access import Level
from casefile.documents.models import Document
from casefile.documents.service import document_for

DocumentsRead = Annotated[Principal, Depends(Require(Permission.READ_DOCUMENTS))]
DocumentsWrite = Annotated[Principal, Depends(Require(Permission.WRITE_DOCUMENTS))]
DocumentsDelete = Annotated[Principal, Depends(Require(Permission.DELETE_DOCUMENTS))]


def document_in_path(level: Level) -> Callable[..., Awaitable[Document]]:
    async def dependency(principal: CurrentPrincipal, session: SessionDep, document_id: str) -> Document:
        return await document_for(session, principal, document_id, level)

    return dependency


DocumentInPath = Annotated[Document, Depends(document_in_path(Level.READ))]
DocumentToWrite = Annotated[Document, Depends(document_in_path(Level.WRITE))]
