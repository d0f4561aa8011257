"""The query string of a list, as FastAPI dependencies: `list_query(spec)` (page or cursor, limit,
sort, order, fields, search and the spec's filters) and `cursor_query(spec)` (cursor and limit
only); `fields_query` for a single item's `fields`.

Each list's parameters are a Pydantic model built from its spec (`_parameters_model`), which
FastAPI reads as query parameters and publishes in the OpenAPI document; the checks that need the
spec (a sort it offers, a filter's choices, known fields) say what is wrong in their own words.

This module does not use `from __future__ import annotations`: the dependencies' annotations name
a model built at run time, and FastAPI reads them when the dependency is defined."""

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastapi import Query
from pydantic import BaseModel, ConfigDict, Field, ValidationError, WithJsonSchema, create_model

from casefile.errors import ErrorDetail, ValidationFailed
from casefile.listing.cursors import decode_cursor, list_scope
from casefile.listing.spec import (
    DEFAULT_LIMIT,
    MAX_CURSOR_LENGTH,
    MAX_FILTER_VALUES,
    MAX_LIMIT,
    MAX_PAGE,
    MAX_SEARCH_LENGTH,
    ListQuery,
    ListSpec,
    search_words,
)


def parse_fields(value: str | None, allowed: frozenset[str]) -> list[str] | None:
    """`fields=id,title`: the top-level names to return. Unknown names are a validation error."""
    if value is None:
        return None
    names = [name.strip() for name in value.split(",") if name.strip()]
    unknown = [name for name in names if name not in allowed]
    if unknown or not names:
        message = (
            f"Unknown field(s): {', '.join(unknown)}. Allowed: {', '.join(sorted(allowed))}"
            if unknown
            else "Name at least one field"
        )
        raise ValidationFailed.on("fields", message)
    return list(dict.fromkeys(names))


FieldsParam = Annotated[str | None, Query(description="Comma-separated names of the fields to return")]


def fields_query(allowed: frozenset[str]) -> Callable[..., Awaitable[list[str] | None]]:
    """The dependency that parses `fields` for a single item: a 422 at once, so before any
    dependency listed after it (such as the item's lookup) runs."""

    async def dependency(fields: FieldsParam = None) -> list[str] | None:
        return parse_fields(fields, allowed)

    return dependency


def project(item: dict[str, Any], fields: list[str] | None) -> dict[str, Any]:
    return item if fields is None else {name: item[name] for name in fields}


_CURSOR_DESCRIPTION = (
    "`meta.pagination.next_cursor` of the previous page, instead of `page`: the next page by key "
    "(no OFFSET, however deep). Repeat the same sort, order, filters and search."
)


def _parameters_model(spec: ListSpec) -> type[BaseModel]:
    """The query parameters of a list of `spec.model`, as one model."""
    sort_names = ", ".join(spec.sortable)
    fields: dict[str, Any] = {
        "page": (int, Field(1, ge=1, le=MAX_PAGE, description="Page number, from 1")),
        "cursor": (str | None, Field(None, max_length=MAX_CURSOR_LENGTH, description=_CURSOR_DESCRIPTION)),
        "limit": (
            int,
            Field(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT, description=f"Items per page, 1-{MAX_LIMIT}"),
        ),
        # Published as enums (WithJsonSchema); `list_query` checks them and says what is wrong.
        "sort": (
            Annotated[str | None, WithJsonSchema({"type": "string", "enum": list(spec.sortable)})],
            Field(None, description=f"Sort field: {sort_names}"),
        ),
        "order": (
            Annotated[str, WithJsonSchema({"type": "string", "enum": ["asc", "desc"]})],
            Field(spec.default_order, description=f"asc or desc (default {spec.default_order})"),
        ),
        "fields": (str | None, Field(None, description="Comma-separated names of the fields to return")),
        "search": (
            str | None,
            Field(
                None,
                max_length=MAX_SEARCH_LENGTH,
                description="Full-text search; every word must match, as a prefix",
            ),
        ),
    }
    for name in spec.filters:
        fields[name] = (
            str | None,
            Field(None, max_length=2000, description="Filter; comma-separated means any of"),
        )
    name = f"{spec.model.__name__}ListParameters"
    model: type[BaseModel] = create_model(name, __config__=ConfigDict(extra="ignore"), **fields)
    return model


def list_query(spec: ListSpec) -> Callable[..., Awaitable[ListQuery]]:
    """The dependency that parses and validates a list request for `spec`."""
    parameters = _parameters_model(spec)

    async def dependency(params: Annotated[parameters, Query()]) -> ListQuery:  # type: ignore[valid-type]
        return _list_query(spec, params.model_dump())  # type: ignore[attr-defined]

    return dependency


_BUILT_MODELS: dict[int, type[BaseModel]] = {}


def build_list_query(spec: ListSpec, params: dict[str, str]) -> ListQuery:
    """A list's query from plain parameters (the web app's pages, whose URLs carry the same
    parameters as the API's), with exactly the checks of `list_query`."""
    model = _BUILT_MODELS.get(id(spec))
    if model is None:
        model = _BUILT_MODELS[id(spec)] = _parameters_model(spec)
    try:
        parsed = model.model_validate(params)
    except ValidationError as exc:
        details = [ErrorDetail(".".join(map(str, e["loc"])), e["msg"]) for e in exc.errors()]
        raise ValidationFailed(details=details) from None
    return _list_query(spec, parsed.model_dump())


def _list_query(spec: ListSpec, params: dict[str, Any]) -> ListQuery:
    problems: list[ErrorDetail] = []
    # An empty `sort=` is a value, and not one of the choices: 422, not the default.
    sort = spec.default_sort if params["sort"] is None else params["sort"]
    if sort not in spec.sortable:
        problems.append(ErrorDetail("sort", f"Sort by one of: {', '.join(spec.sortable)}"))
    order = params["order"]
    if order not in ("asc", "desc"):
        problems.append(ErrorDetail("order", "Order must be asc or desc"))
    filters: dict[str, list[str]] = {}
    for name in spec.filters:
        raw = params[name]
        if raw is not None:
            values = [v.strip() for v in raw.split(",") if v.strip()]
            choices = spec.filter_choices.get(name)
            if len(values) > MAX_FILTER_VALUES:
                problems.append(ErrorDetail(name, f"At most {MAX_FILTER_VALUES} values"))
            elif choices and any(v not in choices for v in values):
                problems.append(ErrorDetail(name, f"Each value must be one of: {', '.join(choices)}"))
            filters[name] = values
    try:
        fields = parse_fields(params["fields"], spec.output_fields)
    except ValidationFailed as exc:
        problems.extend(exc.details or [])
        fields = None
    if problems:
        raise ValidationFailed(details=problems)
    words = search_words(params["search"])
    scope = list_scope(filters, words)
    page, after = params["page"], None
    if params["cursor"] is not None:
        if page != 1:
            raise ValidationFailed.on("page", "Give a page or a cursor, not both")
        page, after = decode_cursor(params["cursor"], spec, sort, order, scope)
    return ListQuery(
        page=page,
        limit=params["limit"],
        sort=sort,
        order=order,
        search_words=words,
        fields=fields,
        filters=filters,
        after=after,
        scope=scope,
    )


CursorParam = Annotated[
    str | None,
    Query(max_length=MAX_CURSOR_LENGTH, description="`meta.pagination.next_cursor` of the previous page"),
]
LimitParam = Annotated[int, Query(ge=1, le=MAX_LIMIT, description=f"Items per page, 1-{MAX_LIMIT}")]


def cursor_query(spec: ListSpec) -> Callable[..., Awaitable[ListQuery]]:
    """The dependency of a list that is read from its newest row by cursor only (`fetch_next`):
    `cursor` and `limit`, in the spec's default sort and order; the filters are the route's own."""

    async def dependency(cursor: CursorParam = None, limit: LimitParam = DEFAULT_LIMIT) -> ListQuery:
        sort, order = spec.default_sort, spec.default_order
        page, after = 1, None
        if cursor is not None:
            page, after = decode_cursor(cursor, spec, sort, order, "")
        return ListQuery(
            page=page,
            limit=limit,
            sort=sort,
            order=order,
            search_words=None,
            fields=None,
            filters={},
            after=after,
        )

    return dependency
