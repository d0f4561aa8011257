"""What every request gets before its handler runs: the process's runtime, and its one
transaction (`SessionDep`: committed when the handler returns, rolled back if it raises), and the
row its path names (`in_path`). Who is calling is `casefile.auth.dependencies`."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Annotated, TypeVar

from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.routing import route_streams_its_body
from casefile.runtime import Runtime

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def runtime_of(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


async def get_runtime(request: Request) -> Runtime:
    # `async def`: FastAPI runs a plain `def` dependency in its thread pool, a hop per request.
    return runtime_of(request)


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]

# The dependencies every authenticated request resolves (`get_session`, `get_principal`) take the
# runtime from the request, not from `RuntimeDep`: FastAPI walks a dependency's whole subtree each
# time it is named, cached or not, and these two are named several times per request (a case read
# walked 17 nodes, 11 since).


async def get_session(request: Request) -> AsyncIterator[AsyncSession]:
    """The request's one transaction: committed when the handler returns, rolled back if it raises."""
    write = request.method not in SAFE_METHODS and not route_streams_its_body(request)
    async with runtime_of(request).db.transaction(write=write) as session:
        session.info["write"] = write
        yield session


# scope="function": the commit happens when the handler returns, before the response is sent, so
# a client that reads right after a write always sees it (and a failed commit is an error response).
SessionDep = Annotated[AsyncSession, Depends(get_session, scope="function")]


RowT = TypeVar("RowT")


def in_path(
    lookup: Callable[[AsyncSession, str], Awaitable[RowT]], param: str
) -> Callable[..., Awaitable[RowT]]:
    """Dependency: the row the path parameter `param` names, found by the domain's `lookup` in the
    request's transaction (or 404), e.g. `Depends(in_path(get_case, "case_id"))`."""

    async def dependency(session: AsyncSession, **path: str) -> RowT:
        return await lookup(session, path[param])

    # FastAPI reads the parameters from the signature: the session, and the path parameter by name.
    dependency.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter("session", inspect.Parameter.KEYWORD_ONLY, annotation=SessionDep),
            inspect.Parameter(param, inspect.Parameter.KEYWORD_ONLY, annotation=str),
        ]
    )
    return dependency
