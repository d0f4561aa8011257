"""The query-string rule of every endpoint (docs/api-conventions.md#errors, contract §3): a
parameter the route does not declare, or a single-valued one given twice, is a VALIDATION_ERROR
naming it. So a typo (`?stauts=active`) never reads as "no filter", and `?status=a&status=b` never
silently keeps one of the two (several values of a filter are one value, `status=a,b`).

The declared parameters are read from the route itself (its dependant and every sub-dependency, such
as the shared list parameters of `listing.list_query`), so nothing is listed twice. `QueryCheck` is
attached where the routers are assembled (`app.py`, `admin.py`: after the administrator check).
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar, Union, get_args, get_origin

from fastapi import Depends, Request
from fastapi.dependencies.models import Dependant
from pydantic import BaseModel

from casefile.errors import ErrorDetail, ValidationFailed

UNKNOWN = "Unknown query parameter"
REPEATED = "Give this parameter once; several values are one comma-separated value"

# Set on an endpoint whose callers add parameters of their own (an OpenID provider adds
# `session_state`, `error_description`, … to the callback): only its declared ones are checked.
_OPEN_ATTRIBUTE = "__casefile_open_query_string__"

# Set on an endpoint that takes a family of parameters named by data (a list's `cf.<name>=`
# custom-field filters): those prefixes are declared; each such parameter is single-valued.
_PREFIXES_ATTRIBUTE = "__casefile_query_prefixes__"

_CACHE_ATTRIBUTE = "_casefile_query_parameters"

EndpointT = TypeVar("EndpointT", bound=Callable[..., Any])


def open_query_string(endpoint: EndpointT) -> EndpointT:
    """Let `endpoint` receive query parameters it does not declare (they are ignored)."""
    setattr(endpoint, _OPEN_ATTRIBUTE, True)
    return endpoint


def query_prefix(prefix: str) -> Callable[[EndpointT], EndpointT]:
    """Let `endpoint` take every parameter whose name starts with `prefix` (once each)."""

    def mark(endpoint: EndpointT) -> EndpointT:
        setattr(endpoint, _PREFIXES_ATTRIBUTE, (*getattr(endpoint, _PREFIXES_ATTRIBUTE, ()), prefix))
        return endpoint

    return mark


async def check_query_parameters(request: Request) -> None:
    route = request.scope.get("route")
    dependant = getattr(route, "dependant", None)
    if dependant is None:
        return
    declared, multi_valued, open_string = _declared(route)
    prefixes: tuple[str, ...] = getattr(getattr(route, "endpoint", None), _PREFIXES_ATTRIBUTE, ())
    counts: dict[str, int] = {}
    for name, _ in request.query_params.multi_items():
        counts[name] = counts.get(name, 0) + 1

    def is_declared(name: str) -> bool:
        return name in declared or name.startswith(prefixes)

    problems = [
        ErrorDetail(name, UNKNOWN) for name in counts if not is_declared(name) and not open_string
    ] + [
        ErrorDetail(name, REPEATED)
        for name, count in counts.items()
        if count > 1 and is_declared(name) and name not in multi_valued
    ]
    if problems:
        raise ValidationFailed(details=problems)


QueryCheck = Depends(check_query_parameters)


def _declared(route: Any) -> tuple[frozenset[str], frozenset[str], bool]:
    """(every declared query parameter, those that take several values, whether others are let in),
    worked out once per route and kept on it (routes are not hashable)."""
    cached: tuple[frozenset[str], frozenset[str], bool] | None = getattr(route, _CACHE_ATTRIBUTE, None)
    if cached is None:
        cached = _work_out(route)
        setattr(route, _CACHE_ATTRIBUTE, cached)
    return cached


def _work_out(route: Any) -> tuple[frozenset[str], frozenset[str], bool]:
    names: set[str] = set()
    multi: set[str] = set()
    for alias, annotation in _query_fields(route.dependant):
        names.add(alias)
        if _is_sequence(annotation):
            multi.add(alias)
    return frozenset(names), frozenset(multi), bool(getattr(route.endpoint, _OPEN_ATTRIBUTE, False))


def _query_fields(dependant: Dependant) -> Iterator[tuple[str, Any]]:
    for field in dependant.query_params:
        annotation = field.field_info.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            # A model of query parameters: its fields are the parameters.
            for name, info in annotation.model_fields.items():
                yield info.alias or name, info.annotation
        else:
            yield field.alias, annotation
    for sub in dependant.dependencies:
        yield from _query_fields(sub)


def _is_sequence(annotation: Any) -> bool:
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        return any(_is_sequence(arg) for arg in get_args(annotation))
    candidate = origin or annotation
    return (
        isinstance(candidate, type)
        and issubclass(candidate, (list, tuple, set, frozenset, Sequence))
        and (not issubclass(candidate, (str, bytes)))
    )
