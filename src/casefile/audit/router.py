"""The verifiable log's endpoints under `/audit` (`log_router`, mounted by `casefile.app` for
administrators and API keys holding `read:audit`); the inclusion proof, which shows its entry, is
in `casefile.admin` with `GET /admin/audit`. The trail's list for administrators,
`GET /admin/audit`, is in `casefile.admin` (it hides what walls hide, which the layers below
`access` cannot know); a case's own trail, `GET /cases/{case_id}/audit`, is a case endpoint
(`casefile.cases.router`)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query
from fastapi.responses import JSONResponse

from casefile import envelope
from casefile.audit import proofs
from casefile.audit.schemas import (
    ConsistencyProofOut,
    SigningKeyOut,
    TreeHeadOut,
)
from casefile.envelope import Envelope
from casefile.request_scope import SessionDep

log_router = APIRouter(prefix="/audit", tags=["audit"])


@log_router.get("/tree-heads/latest", response_model=Envelope[TreeHeadOut])
async def latest_tree_head(session: SessionDep) -> JSONResponse:
    """The newest signed tree head of the audit log."""
    return envelope.ok(proofs.head_out(await proofs.signed_head(session)))


@log_router.get("/tree-heads/{tree_size}", response_model=Envelope[TreeHeadOut])
async def tree_head(tree_size: Annotated[int, Path(ge=0, le=2**62)], session: SessionDep) -> JSONResponse:
    """The signed tree head of that size (one per batch of the sequencer)."""
    return envelope.ok(proofs.head_out(await proofs.signed_head(session, tree_size)))


@log_router.get("/signing-keys", response_model=Envelope[list[SigningKeyOut]])
async def signing_keys(session: SessionDep) -> JSONResponse:
    """Every key that has signed tree heads, oldest first (rotated keys stay)."""
    return envelope.ok(await proofs.signing_keys(session))


@log_router.get(
    "/consistency-proof",
    response_model=Envelope[ConsistencyProofOut],
    responses={
        404: {
            "description": "No signed tree head has the size `first` or `second`, or none is signed yet "
            "(`NOT_FOUND`): heads are signed per batch of the sequencer, so not every size has one"
        }
    },
)
async def consistency_proof(
    session: SessionDep,
    first: Annotated[int, Query(ge=1, le=2**62, description="The older signed head's size")],
    second: Annotated[int | None, Query(ge=1, le=2**62, description="Default: the newest head")] = None,
) -> JSONResponse:
    """The proof (RFC 9162) that the log at `second` extends the log at `first`: nothing signed
    before was changed or removed."""
    return envelope.ok(await proofs.consistency_proof(session, first, second))
