"""The OpenAPI document, telling the truth about what each operation can answer
(docs/api-conventions.md#openapi).

FastAPI's own document knows each route's success model, but not how Casefile fails: it invents a
422 in a shape the API never sends and declares no security at all. Here, the security and the
error responses of every operation are derived from the route itself, by one rule each, so that a
new endpoint is described correctly without listing anything by hand:

- it needs credentials if `get_principal` is among its dependencies (bearer or `X-API-Key`), an
  access token only if `require_user`/`require_admin` is (API keys never qualify): 401, and 403
  when a permission, a user or an administrator is required; none of these on public routes;
- endpoints that take credentials themselves (`limit_by_client_ip`: login, refresh, sign-on) also
  answer 401 (wrong password, used refresh token);
- every counted request (a principal or the client-IP bucket) may be refused with 429;
- a path parameter names a row that may not exist, or that the caller may not see: 404; so may a
  body field that names one (`case_id`, `user_ids`: its name ends in `_id` or `_ids`), where it
  names a matter the caller may not see (other references to nothing are 422 naming the field,
  docs/api-conventions.md#references);
- every operation checks its query string (422), and every body-carrying method may be refused as
  too large (413), of the wrong type (415) or invalid (422);
- a state change (POST, PUT, PATCH, DELETE) on an authenticated route may meet a conflict (409);
- anything may fail unexpectedly (500); with `CASEFILE_REQUIRE_HTTPS`, plain HTTP is refused (403).

A route adds what only it can answer (a range outside the document, 416) with FastAPI's
`responses=`; the descriptions and examples here are those of `casefile.errors`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, get_args

from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute, iter_route_contexts

from casefile.auth.dependencies import Require, get_principal, limit_by_client_ip, require_admin, require_user
from casefile.envelope import Envelope
from casefile.openapi_errors import (
    API_KEY,
    BEARER,
    ERROR_RESPONSES,
    ERROR_SCHEMAS,
    ETAG_HEADER,
    IDEMPOTENCY_PARAMETER,
    IF_MATCH_PARAMETER,
    IF_NONE_MATCH_PARAMETER,
    METHOD_NOT_ALLOWED,
    NOT_MODIFIED,
    REF,
    SECURITY_SCHEMES,
)
from casefile.operation_ids import OPERATION_IDS
from casefile.shedding import EXEMPT_PATHS

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})

DESCRIPTION = """\
Every endpoint lives under `/api/v1` (`/api` is an alias of the current version).

**Authentication**: `Authorization: Bearer <access token>` (from `POST /auth/login`) or an API
key, as `X-API-Key: <key>` or `Authorization: Bearer <key>`; each operation lists the schemes it
accepts. 401 and 403 answer with the
authentication error body (`AuthError`), every other error with the API error envelope
(`ApiError`). Each operation lists the errors it can give.

**Methods**: a method a path does not take is answered `405 METHOD_NOT_ALLOWED` (`ApiError`) with
an `Allow` header naming the methods it does take; `OPTIONS` is answered the same way.
"""


def _dependency_calls(dependant: Dependant) -> Iterator[Callable[..., Any]]:
    for sub in dependant.dependencies:
        if sub.call is not None:
            yield sub.call
        yield from _dependency_calls(sub)


def _path_parameters(dependant: Dependant) -> bool:
    return bool(dependant.path_params) or any(_path_parameters(d) for d in dependant.dependencies)


def _body_names_rows(dependant: Dependant) -> bool:
    """Whether a body field names other rows by id (`case_id`, `user_ids`, a template's
    `parties[].contact_id`) or custom fields by name (`custom_fields`): a reference to nothing is
    404 (docs/api-conventions.md#references)."""
    return any(_names_rows(param.field_info.annotation, {param.name}) for param in dependant.body_params)


def _names_rows(annotation: Any, names: set[str], seen: frozenset[int] = frozenset()) -> bool:
    if any(name.endswith(("_id", "_ids")) or name == "custom_fields" for name in names):
        return True
    if id(annotation) in seen:  # a model that contains itself
        return False
    seen |= {id(annotation)}
    fields = getattr(annotation, "model_fields", None)
    if isinstance(fields, dict):
        return any(_names_rows(field.annotation, {name}, seen) for name, field in fields.items())
    return any(_names_rows(arg, set(), seen) for arg in get_args(annotation))


def operation_errors(route: Any, method: str) -> tuple[list[str], list[dict[str, list[str]]] | None]:
    """The error statuses `method` on `route` can answer, and its security requirement (None: public)."""
    calls = list(_dependency_calls(route.dependant))
    authenticated = get_principal in calls
    users_only = require_user in calls or require_admin in calls
    restricted = users_only or any(isinstance(call, Require) for call in calls)
    takes_credentials = limit_by_client_ip in calls
    statuses = {"400", "422", "500"}
    if authenticated or takes_credentials:
        statuses |= {"401", "429"}
    if restricted or authenticated:
        # Any authenticated request may also meet AUTH_020 (plain HTTP where HTTPS is required).
        statuses.add("403")
    if _path_parameters(route.dependant) or _body_names_rows(route.dependant):
        statuses.add("404")
    if method in BODY_METHODS:
        statuses |= {"413", "415"}
    if authenticated and method in WRITE_METHODS:
        statuses.add("409")
    if (route.path_format or "") not in EXEMPT_PATHS:  # load shedding (casefile.shedding)
        statuses.add("503")
    security: list[dict[str, list[str]]] | None = None
    if authenticated:
        security = [{BEARER: []}] if users_only else [{BEARER: []}, {API_KEY: []}]
    return sorted(statuses), security


def one_resource(route: Any) -> bool:
    """Whether the route answers with one resource (`Envelope[…]`, not a page of them): such an
    answer has an ETag (casefile.conditional)."""
    model = getattr(route, "response_model", None)
    return getattr(model, "__pydantic_generic_metadata__", {}).get("origin") is Envelope


def _conditional(operation: dict[str, Any], method: str, *, tagged: bool, versioned_path: bool) -> None:
    """The ETag of a single resource's answer, and the conditions the operation honours."""
    responses = operation.setdefault("responses", {})
    if tagged and method != "DELETE":
        for status in ("200", "201"):
            if status in responses:
                responses[status].setdefault("headers", {})["ETag"] = ETAG_HEADER
    parameters = operation.setdefault("parameters", [])
    named = {str(p.get("name", "")).lower() for p in parameters}
    if method == "GET" and tagged:
        if "if-none-match" not in named:
            parameters.append(IF_NONE_MATCH_PARAMETER)
        responses.setdefault("304", NOT_MODIFIED)
    elif method in ("PUT", "PATCH", "DELETE") and versioned_path:
        parameters.append(IF_MATCH_PARAMETER)
        responses.setdefault("412", ERROR_RESPONSES["412"])
    if not parameters:
        del operation["parameters"]


def refine(document: dict[str, Any], routes: list[Any]) -> dict[str, Any]:
    """Replace FastAPI's invented 422 and add the security and error responses of every operation."""
    components = document.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    for fastapi_only in ("HTTPValidationError", "ValidationError"):
        schemas.pop(fastapi_only, None)
    schemas.update(ERROR_SCHEMAS)
    components["securitySchemes"] = SECURITY_SCHEMES
    components.setdefault("responses", {})["MethodNotAllowed"] = METHOD_NOT_ALLOWED
    # Paths whose GET is one resource: their writes honour If-Match.
    contexts = list(iter_route_contexts(routes))
    versioned = {
        route.path_format
        for route in contexts
        if isinstance(route.original_route, APIRoute)
        and "GET" in (route.methods or ())
        and one_resource(route)
    }
    # Included routers are walked as FastAPI's own document does: each route with the prefix and the
    # dependencies (the administrator check, the query-string check) of the routers it is in.
    for route in contexts:
        if not isinstance(route.original_route, APIRoute) or not route.include_in_schema:
            continue
        path_item = document.get("paths", {}).get(route.path_format, {})
        for method in route.methods or ():
            operation = path_item.get(method.lower())
            if operation is None:
                continue
            operation_id = OPERATION_IDS.get((method, route.path_format or ""))
            if operation_id is None:
                raise LookupError(
                    f"{method} {route.path_format} has no operation id: add it to OPERATION_IDS"
                )
            operation["operationId"] = operation_id
            statuses, security = operation_errors(route, method)
            responses = operation.setdefault("responses", {})
            responses.pop("422", None)  # FastAPI's HTTPValidationError: never sent
            for status in statuses:
                responses.setdefault(status, ERROR_RESPONSES[status])
            for status, response in responses.items():
                # An error a route declares itself (`responses={416: {"description": …}}`) has the
                # body every error of its status has.
                if status.isdigit() and int(status) >= 400 and "content" not in response:
                    schema = "AuthError" if status in ("401", "403") else "ApiError"
                    response["content"] = {"application/json": {"schema": {"$ref": REF + schema}}}
            if security is not None:
                operation["security"] = security
            if (route.path_format or "").startswith("/api/"):
                _conditional(
                    operation,
                    method,
                    tagged=one_resource(route),
                    versioned_path=route.path_format in versioned,
                )
            if method == "POST" and security is not None:
                operation.setdefault("parameters", []).append(IDEMPOTENCY_PARAMETER)
    _publish_no_nul(document)
    _projectable_responses_have_no_required_fields(document)
    return document


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"].removeprefix(REF)
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def _projectable_responses_have_no_required_fields(document: dict[str, Any]) -> None:
    """`fields=` returns only the fields asked (docs/api-conventions.md#lists): in a response of an
    operation that takes it, the resource's schema, and those of the objects in it, list no field
    as required."""
    schemas = document.get("components", {}).get("schemas", {})
    projected: set[str] = set()
    for path_item in document.get("paths", {}).values():
        for operation in path_item.values():
            if not any(p.get("name") == "fields" for p in operation.get("parameters", [])):
                continue
            for envelope in _refs(operation.get("responses", {}).get("200", {})):
                data = schemas.get(envelope, {}).get("properties", {}).get("data", {})
                for name in _refs(data):
                    projected.add(name)
                    projected.update(_refs(schemas.get(name, {}).get("properties", {})))
    for name in projected:
        schemas.get(name, {}).pop("required", None)


NO_NUL_PATTERN = "^[^\\x00]*$"


def _publish_no_nul(node: Any) -> None:
    """Every free string (no pattern, enum or format of its own), and every free key of an
    object (a map such as `custom_fields`), is published with the rule of `input_rules` that
    applies to it: no NUL character (PostgreSQL cannot store one)."""
    if isinstance(node, list):
        for item in node:
            _publish_no_nul(item)
    elif isinstance(node, dict):
        if node.get("type") == "string" and not {"pattern", "enum", "format", "const"} & node.keys():
            node["pattern"] = NO_NUL_PATTERN
        free_keys = node.get("additionalProperties", "properties" not in node) is not False
        if node.get("type") == "object" and free_keys and "propertyNames" not in node:
            node["propertyNames"] = {"pattern": NO_NUL_PATTERN}
        for key, value in node.items():
            if key not in ("example", "examples", "default"):
                _publish_no_nul(value)


def install(app: FastAPI) -> None:
    """Make `app.openapi()` (served at /openapi.json, printed by `casefile openapi`) the refined one."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = get_openapi(
                title=app.title,
                version=app.version,
                summary=app.summary,
                description=DESCRIPTION,
                routes=app.routes,
            )
            app.openapi_schema = refine(document, app.routes)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
