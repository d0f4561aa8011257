"""What the documents endpoints depend on: the permissions on documents, and the document a path
names. (The order of parameters matters: see `casefile.auth.dependencies`.)"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends

from casefile.auth.dependencies import Require, in_path
from casefile.auth.permissions import Permission, Principal
from casefile.documents.models import Document
from casefile.documents.service import get_document

DocumentsRead = Annotated[Principal, Depends(Require(Permission.READ_DOCUMENTS))]
DocumentsWrite = Annotated[Principal, Depends(Require(Permission.WRITE_DOCUMENTS))]
DocumentsDelete = Annotated[Principal, Depends(Require(Permission.DELETE_DOCUMENTS))]
DocumentInPath = Annotated[Document, Depends(in_path(get_document, "document_id"))]
