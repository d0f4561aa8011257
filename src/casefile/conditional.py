"""Conditional requests (docs/api-conventions.md#etags, docs/decisions/0031-etags.md): the one place
where every single resource of the API gets its `ETag`, and where `If-None-Match` and `If-Match`
are honoured.

- The ETag is a strong hash of the resource's representation: the envelope's `data`, exactly as
  sent (`tag_of` computes the same tag from a dict, for the web app's forms). Any write that
  changes what a reader sees changes it; nothing else does.
- `GET` (and `HEAD`) with `If-None-Match` naming the current tag: 304, no body.
- `PUT`/`PATCH`/`DELETE` with `If-Match`: the resource is read first as the caller's own `GET` of
  the same path (same credentials, same rules, audited as a read), and the write runs only if its
  tag is named; else 412 `PRECONDITION_FAILED`. A path without a readable representation (its
  `GET` is not a 200 JSON resource: 404, 405, bytes) is left to the write itself, which answers
  as it would without the header. Conditional writes to the same path run one at a time, check
  and write together: in this process behind an asyncio lock, and across the processes sharing a
  PostgreSQL database behind an advisory lock (`Database.held_lock`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any
from weakref import WeakValueDictionary

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from casefile.error_handlers import app_error_response
from casefile.errors import PreconditionFailed
from casefile.middleware import HttpMiddleware
from casefile.routing import CURRENT_PREFIX

if TYPE_CHECKING:
    from casefile.runtime import Runtime

_BODY_START = b'{"success":true,"data":{'
_META = b',"meta":'
_READS = frozenset({"GET", "HEAD"})
_TAGGED_WRITES = frozenset({"PUT", "PATCH", "POST"})
_CONDITIONAL_WRITES = frozenset({"PUT", "PATCH", "DELETE"})
# Not passed to the internal read of a conditional write: they describe the write's body.
_WRITE_ONLY_HEADERS = frozenset({b"content-type", b"content-length", b"if-match", b"idempotency-key"})


def tag_of_representation(data: bytes) -> str:
    """The strong ETag of a representation, given as its JSON bytes."""
    return '"' + hashlib.sha256(data).hexdigest()[:32] + '"'


def tag_of(data: dict[str, Any]) -> str:
    """The ETag the API sends with `data` (its JSON rendered as the envelope renders it)."""
    rendered = json.dumps(data, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":"))
    return tag_of_representation(rendered.encode())


def tag_of_body(body: bytes) -> str | None:
    """The ETag of an envelope's body when it holds one resource (`data` an object, no pagination
    in `meta`); None for a list or anything else. `meta` is the envelope's last key, and a quote
    inside a JSON string is escaped, so the last `,"meta":` is the envelope's own."""
    if not body.startswith(_BODY_START):
        return None
    cut = body.rfind(_META)
    if cut < 0 or b'"pagination"' in body[cut:]:
        return None
    return tag_of_representation(body[len(_BODY_START) - 1 : cut])


def _listed_tags(value: str | None) -> set[str] | None:
    """The tags an `If-Match`/`If-None-Match` names (`*` as itself); None without the header.
    Weak tags (`W/"…"`) compare by their value, as `If-None-Match` allows."""
    if value is None:
        return None
    return {tag.strip().removeprefix("W/") for tag in value.split(",") if tag.strip()}


def _matches(tags: Iterable[str], current: str) -> bool:
    return any(tag in ("*", current) for tag in tags)


class ConditionalRequestsMiddleware(HttpMiddleware):
    """ETags on single resources, 304 for reads, 412 for stale writes (the module's docstring).
    Innermost: it sees the handlers' answers before any outer layer adds its headers."""

    def __init__(self, app: ASGIApp) -> None:
        super().__init__(app)
        self._locks: WeakValueDictionary[str, asyncio.Lock] = WeakValueDictionary()

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        method: str = scope["method"]
        path: str = scope["path"]
        if not path.startswith(CURRENT_PREFIX + "/"):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if method in _CONDITIONAL_WRITES and (wanted := _listed_tags(headers.get("if-match"))) is not None:
            lock = self._locks.get(path)
            if lock is None:
                lock = self._locks[path] = asyncio.Lock()
            runtime: Runtime = scope["app"].state.runtime
            async with lock, runtime.db.held_lock(f"if-match {path}"):
                current = await self._current_tag(scope)
                if current is not None and not _matches(wanted, current):
                    error = PreconditionFailed(headers={"ETag": current})
                    await app_error_response(error)(scope, receive, send)
                    return
                await self._tagged(scope, receive, send, method)
            return
        if method in _READS or method in _TAGGED_WRITES:
            await self._tagged(scope, receive, send, method, _listed_tags(headers.get("if-none-match")))
            return
        await self.app(scope, receive, send)

    async def _tagged(
        self, scope: Scope, receive: Receive, send: Send, method: str, if_none_match: set[str] | None = None
    ) -> None:
        """Run the request; a 200 (or a POST's 201) JSON answer holding one resource gets its
        ETag, and a read whose tag the caller already has becomes 304."""
        started: Message | None = None

        async def capture(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                status = message["status"]
                content_type = Headers(raw=message.get("headers", [])).get("content-type", "")
                if (status == 200 or (status == 201 and method == "POST")) and content_type.startswith(
                    "application/json"
                ):
                    started = message
                    return
                await send(message)
                return
            if started is None or message["type"] != "http.response.body":
                await send(message)
                return
            if message.get("more_body", False):
                # A streamed answer (not an envelope built whole): passed on as it comes, untagged.
                await send(started)
                started = None
                await send(message)
                return
            body = message.get("body", b"")
            tag = tag_of_body(body)
            response_headers = MutableHeaders(scope=started)
            if tag is not None:
                response_headers["ETag"] = tag
                if method in _READS and if_none_match is not None and _matches(if_none_match, tag):
                    del response_headers["content-length"]
                    del response_headers["content-type"]
                    await send({**started, "status": 304})
                    await send({"type": "http.response.body", "body": b""})
                    return
            await send(started)
            await send({"type": "http.response.body", "body": body})

        await self.app(scope, receive, capture)

    async def _current_tag(self, scope: Scope) -> str | None:
        """The tag of what the caller's `GET` of this path answers now, or None when that is not a
        200 JSON resource."""
        read_scope = dict(scope)
        read_scope["method"] = "GET"
        read_scope["query_string"] = b""
        read_scope["headers"] = [(k, v) for k, v in scope["headers"] if k not in _WRITE_ONLY_HEADERS]
        if isinstance(scope.get("state"), dict):
            read_scope["state"] = dict(scope["state"])
        status = 0
        content_type = ""
        chunks: list[bytes] = []

        async def nothing() -> Message:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def collect(message: Message) -> None:
            nonlocal status, content_type
            if message["type"] == "http.response.start":
                status = message["status"]
                content_type = Headers(raw=message.get("headers", [])).get("content-type", "")
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await self.app(read_scope, nothing, collect)
        if status != 200 or not content_type.startswith("application/json"):
            return None
        return tag_of_body(b"".join(chunks))
