"""The query string of a list, as FastAPI dependencies: `list_query(spec)` (page or cursor, limit,
sort, order, fields, search and the spec's filters) and `cursor_query(spec)` (cursor and limit
only); `fields_query` for a single item's `fields`.

Each list's parameters are a Pydantic model built from its spec (`_parameters_model`), which
FastAPI reads as query parameters and publishes in the OpenAPI document; the checks that need the
spec (a sort it offers, a filter's choices, known fields) say what is wrong in their own words.

This module does not use `from __future__ import annotations`: the dependencies' annotations name
a model built at run time, and FastAPI reads them when the dependency is defined."""

import re
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastapi import Query, Request
from pydantic import BaseModel, ConfigDict, Field, ValidationError, WithJsonSchema, create_model

from casefile.errors import ErrorDetail, ValidationFailed
from casefile.listing.cursors import decode_cursor, list_scope
from casefile.listing.projection import (
    MAX_FIELDS_LENGTH,
    Projectable,
    Projection,
    fields_pattern,
    parse_fields,
)
from casefile.listing.spec import (
    CUSTOM_PREFIX,
    DEFAULT_LIMIT,
    MAX_CURSOR_LENGTH,
    MAX_CUSTOM_FILTERS,
    MAX_FILTER_VALUES,
    MAX_LIMIT,
    MAX_PAGE,
    MAX_SEARCH_LENGTH,
    ListQuery,
    ListSpec,
    search_words,
)

FIELDS_DESCRIPTION = (
    "Comma-separated names of the fields to return; a field holding objects takes the names of "
    "theirs in braces, one level deep: `id,title,assignees{id,name}`"
)


def _published_fields(allowed: Projectable) -> Any:
    """`fields` as published: a string of the known names (`fields_pattern`). The pattern is
    published, not enforced by Pydantic: `parse_fields` says what is wrong in its own words."""
    schema = {"type": "string", "maxLength": MAX_FIELDS_LENGTH, "pattern": fields_pattern(allowed)}
    return Annotated[str | None, WithJsonSchema(schema)]


def _published_choices(choices: tuple[str, ...]) -> Any:
    """A filter with fixed choices as published: one or more of them, comma-separated (checked
    by `_list_query`, which names the choices when a value is not one of them). As the parser
    reads it: spaces around a value and empty items are ignored; empty is a value, none of them
    (it never reads as "no filter")."""
    item = r"\s*(?:" + "|".join(re.escape(c) for c in choices) + r")?\s*"
    pattern = f"^{item}(?:,{item})*$"
    return Annotated[str | None, WithJsonSchema({"type": "string", "pattern": pattern})]


def fields_query(allowed: Projectable) -> Callable[..., Awaitable[Projection | None]]:
    """The dependency that parses `fields` for a single item: a 422 at once, so before any
    dependency listed after it (such as the item's lookup) runs."""
    published = _published_fields(allowed)

    async def dependency(
        fields: Annotated[published, Query(description=FIELDS_DESCRIPTION)] = None,  # type: ignore[valid-type]
    ) -> Projection | None:
        return parse_fields(fields, allowed)

    return dependency


_CURSOR_DESCRIPTION = (
    "`meta.pagination.next_cursor` of the previous page, instead of `page`: the next page by key "
    "(no OFFSET, however deep). Repeat the same sort, order, filters and search."
)


def _parameters_model(spec: ListSpec) -> type[BaseModel]:
    """The query parameters of a list of `spec.model`, as one model."""
    sort_names = ", ".join(spec.sortable) + (f", {CUSTOM_PREFIX}<custom field>" if spec.custom_fields else "")
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
        "fields": (_published_fields(spec.output_fields), Field(None, description=FIELDS_DESCRIPTION)),
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
        choices = spec.filter_choices.get(name)
        if (format_name := spec.filter_formats.get(name)) is not None:
            fields[name] = (
                Annotated[str | None, WithJsonSchema({"type": "string", "format": format_name})],
                Field(None, max_length=2000, description=f"Filter: one {format_name}"),
            )
            continue
        fields[name] = (
            _published_choices(choices) if choices else str | None,
            Field(None, max_length=2000, description="Filter; comma-separated means any of"),
        )
    name = f"{spec.model.__name__}ListParameters"
    model: type[BaseModel] = create_model(name, __config__=ConfigDict(extra="ignore"), **fields)
    return model


def list_query(spec: ListSpec) -> Callable[..., Awaitable[ListQuery]]:
    """The dependency that parses and validates a list request for `spec`."""
    parameters = _parameters_model(spec)

    if not spec.custom_fields:

        async def dependency(params: Annotated[parameters, Query()]) -> ListQuery:  # type: ignore[valid-type]
            return _list_query(spec, params.model_dump(), {})  # type: ignore[attr-defined]

        return dependency

    async def with_custom(
        request: Request,
        params: Annotated[parameters, Query()],  # type: ignore[valid-type]
    ) -> ListQuery:
        custom = {
            name: value for name, value in request.query_params.items() if name.startswith(CUSTOM_PREFIX)
        }
        return _list_query(spec, params.model_dump(), custom)  # type: ignore[attr-defined]

    return with_custom


_CUSTOM_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")


def _custom_filters(raw: dict[str, str], problems: list[ErrorDetail]) -> dict[str, list[str]]:
    """`cf.<name>=a,b` → {name: [a, b]}; the names are checked against the definitions later."""
    if len(raw) > MAX_CUSTOM_FILTERS:
        problems.append(ErrorDetail(CUSTOM_PREFIX, f"At most {MAX_CUSTOM_FILTERS} custom-field filters"))
        return {}
    filters: dict[str, list[str]] = {}
    for parameter, value in raw.items():
        name = parameter.removeprefix(CUSTOM_PREFIX)
        values = [v.strip() for v in value.split(",") if v.strip()]
        if not _CUSTOM_NAME.fullmatch(name):
            problems.append(ErrorDetail(parameter, "Not a custom field's name"))
        elif len(value) > 2000 or len(values) > MAX_FILTER_VALUES:
            problems.append(ErrorDetail(parameter, f"At most {MAX_FILTER_VALUES} values, 2000 characters"))
        else:
            filters[name] = values
    return filters


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
    custom = {name: value for name, value in params.items() if name.startswith(CUSTOM_PREFIX)}
    return _list_query(spec, parsed.model_dump(), custom if spec.custom_fields else {})


def _list_query(spec: ListSpec, params: dict[str, Any], custom: dict[str, str]) -> ListQuery:
    problems: list[ErrorDetail] = []
    # An empty `sort=` is a value, and not one of the choices: 422, not the default.
    sort = spec.default_sort if params["sort"] is None else params["sort"]
    custom_sort = (
        spec.custom_fields
        and sort.startswith(CUSTOM_PREFIX)
        and _CUSTOM_NAME.fullmatch(sort.removeprefix(CUSTOM_PREFIX)) is not None
    )
    if sort not in spec.sortable and not custom_sort:
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
    custom_filters = _custom_filters(custom, problems)
    if problems:
        raise ValidationFailed(details=problems)
    words = search_words(params["search"])
    scope = list_scope({**filters, **{CUSTOM_PREFIX + k: v for k, v in custom_filters.items()}}, words)
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
        custom_filters=custom_filters,
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
