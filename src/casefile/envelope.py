"""Response envelopes (docs/api-conventions.md#envelopes) and the request id that every response carries."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, Generic, TypeVar
from urllib.parse import parse_qsl, urlencode

from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from casefile.clock import format_timestamp, new_id, utcnow
from casefile.listing import TOTAL_CAP, ListQuery, Page, RowT, project
from casefile.routing import CURRENT_PREFIX

REQUEST_ID_HEADER = "X-Request-ID"
# A caller's own X-Request-ID comes back under this name; it is never our id (contract §2).
CLIENT_REQUEST_ID_HEADER = "X-Client-Request-ID"
_CLIENT_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,128}$")

request_id_var: ContextVar[str | None] = ContextVar("request_id", default=None)
# The request's path and query string (set with its id by RequestIdMiddleware): a list's `Link`
# header names the next page by changing them.
request_target_var: ContextVar[tuple[str, str] | None] = ContextVar("request_target", default=None)

# Where a created resource can be read, by the prefix of its id (`Location` of a 201; a job's of a
# 202): its own URL, or for a row that has none (a party, a hold), the case's list of them.
LOCATIONS = {
    "case": "/cases/{id}",
    "doc": "/documents/{id}",
    "user": "/users/{id}",
    "tsk": "/tasks/{id}",
    "note": "/notes/{id}",
    "con": "/contacts/{id}",
    "pty": "/cases/{case_id}/parties",
    "hold": "/cases/{case_id}/holds",
    "cc": "/conflict-checks/{id}",
    "key": "/admin/api-keys/{id}",
    "wh": "/admin/webhooks/{id}",
    "rcv": "/admin/webhook-recoveries/{id}",
    "grp": "/admin/groups/{id}",
    "job": "/jobs/{id}",
    "cf": "/custom-fields/{id}",
    "cfs": "/custom-field-sets/{id}",
    "bulk": "/cases/bulk/{id}",
    "exp": "/exports/{id}",
}


def make_request_id() -> str:
    """The request's id: always the service's own `req_…` id, whatever the caller sent."""
    return new_id("req")


def client_request_id(incoming: str | None) -> str | None:
    """A caller's X-Request-ID if it is well-formed (1 to 128 of `[A-Za-z0-9._-]`); else None,
    so nothing unbounded or unsafe is echoed into a header or a log line."""
    if incoming and _CLIENT_REQUEST_ID.fullmatch(incoming):
        return incoming
    return None


def current_request_id() -> str:
    return request_id_var.get() or new_id("req")


def meta(request_id: str | None = None) -> dict[str, Any]:
    return {"request_id": request_id or current_request_id(), "timestamp": format_timestamp(utcnow())}


def ok(data: Any, *, status_code: int = 200) -> JSONResponse:
    return JSONResponse({"success": True, "data": data, "meta": meta()}, status_code=status_code)


def location_of(data: dict[str, Any]) -> str:
    """The `Location` of a created resource, from its id's prefix (LOCATIONS)."""
    prefix = str(data["id"]).partition("_")[0]
    return CURRENT_PREFIX + LOCATIONS[prefix].format(**data)


def created(data: Any, *, location: str | None = None) -> JSONResponse:
    """201 with `Location`: the given path, else the one the data's id leads to (LOCATIONS)."""
    response = ok(data, status_code=201)
    response.headers["Location"] = location or location_of(data)
    return response


def accepted(job: dict[str, Any]) -> JSONResponse:
    """202 for queued work (the job, named by `job_id`), with `Location`: where its progress is read."""
    response = ok(job, status_code=202)
    response.headers["Location"] = location_of({"id": job["job_id"]})
    return response


def deleted(resource_id: str) -> JSONResponse:
    return ok({"id": resource_id, "deleted": True})


def paginated(
    items: list[dict[str, Any]],
    *,
    page: int,
    limit: int,
    total: int,
    total_exact: bool = True,
    next_cursor: str | None = None,
) -> JSONResponse:
    body_meta = meta()
    body_meta["pagination"] = {
        "page": page,
        "limit": limit,
        "total": total,
        "pages": math.ceil(total / limit) if total else 0,
    }
    # Only when they say something: the contract's pagination is exactly {page, limit, total,
    # pages}, and so it stays on a last page whose total is exact (the conformance suite compares
    # it whole). Absent `total_exact` means true, absent `next_cursor` means no next page.
    if not total_exact:
        body_meta["pagination"]["total_exact"] = False
    if next_cursor is not None:
        body_meta["pagination"]["next_cursor"] = next_cursor
    more = next_cursor is not None or page * limit < total
    return _with_next_link(
        JSONResponse({"success": True, "data": items, "meta": body_meta}),
        cursor=next_cursor,
        page=page + 1 if more else None,
    )


def cursor_paginated(items: list[dict[str, Any]], *, limit: int, next_cursor: str | None) -> JSONResponse:
    """A page of a cursor list (`listing.fetch_next`): no page number or total, the next cursor."""
    body_meta = meta()
    body_meta["pagination"] = {"limit": limit, "next_cursor": next_cursor}
    return _with_next_link(
        JSONResponse({"success": True, "data": items, "meta": body_meta}), cursor=next_cursor, page=None
    )


def _with_next_link(response: JSONResponse, *, cursor: str | None, page: int | None) -> JSONResponse:
    """Every list's RFC 8288 `Link: <…>; rel="next"` when there is a next page: this request's URL
    (path and query, a reference relative to it) with `cursor` (by key, when the list gives one)
    or else `page` moved on."""
    target = request_target_var.get()
    if target is None or (cursor is None and page is None):
        return response
    path, query = target
    kept = [(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if k not in ("page", "cursor")]
    kept.append(("cursor", cursor) if cursor is not None else ("page", str(page)))
    response.headers["Link"] = f'<{path}?{urlencode(kept)}>; rel="next"'
    return response


def listed(page: Page[RowT], query: ListQuery, dump: Callable[[RowT], dict[str, Any]]) -> JSONResponse:
    """One page of a list endpoint (`listing.fetch_page`): each row dumped, and cut down to the
    `fields` asked for."""
    return listed_dumped([dump(row) for row in page.rows], page, query)


def listed_dumped(dumped: list[dict[str, Any]], page: Page[Any], query: ListQuery) -> JSONResponse:
    """`listed` for rows already dumped (by a dump that needs the database, e.g. conflict checks)."""
    items = [project(item, query.fields) for item in dumped]
    return paginated(
        items,
        page=query.page,
        limit=query.limit,
        total=page.total,
        total_exact=page.total_exact,
        next_cursor=page.next_cursor,
    )


# Shapes for the OpenAPI document. Handlers build the JSON themselves (so `fields` can trim it)
# and declare these as their response models.
T = TypeVar("T")


class Meta(BaseModel):
    request_id: str
    timestamp: str


class Pagination(BaseModel):
    page: int
    limit: int
    total: int = Field(
        description=f"Matching items: exact up to {TOTAL_CAP:,}; above that the lower bound "
        f"{TOTAL_CAP} with `total_exact: false`"
    )
    pages: int = Field(description="ceil(total / limit): a lower bound too when `total_exact` is false")
    total_exact: bool = Field(
        default=True,
        description=f"Present (false) only when there are more than {TOTAL_CAP:,} matches",
    )
    next_cursor: str | None = Field(
        default=None,
        description="Present when there is a next page: pass it as `cursor` (with the same sort, "
        "order, filters and search) for that page, by key rather than offset",
    )


class PageMeta(Meta):
    pagination: Pagination


class CursorPagination(BaseModel):
    limit: int
    next_cursor: str | None


class CursorPageMeta(Meta):
    pagination: CursorPagination


class Envelope(BaseModel, Generic[T]):
    success: bool = True
    data: T
    meta: Meta


class PageEnvelope(BaseModel, Generic[T]):
    success: bool = True
    data: list[T]
    meta: PageMeta


class DeletedOut(BaseModel):
    id: str
    deleted: bool


class CursorPageEnvelope(BaseModel, Generic[T]):
    success: bool = True
    data: list[T]
    meta: CursorPageMeta
