"""`Idempotency-Key` on every POST (docs/api-conventions.md#idempotency,
docs/decisions/0024-idempotency-and-webhook-health.md).

Two halves, one rule:

- `IdempotencyMiddleware` (pure ASGI) reads a keyed POST's body whole to hash it (method, path and
  body), and, once the handler has answered, stores that answer under the key before sending it.
- `reserve`, called by `auth.dependencies.get_principal` as soon as the caller is known (keys are
  per caller), inserts the key in the request's own transaction. The reservation therefore
  commits with the request's change, or not at all: a request refused before changing anything
  leaves no key, and its retry runs again. A second request with the key waits on the first's
  row (PostgreSQL's unique index; SQLite's one writer) and then finds it: its answer stored (a
  replay, `Idempotent-Replayed: true`), not yet stored (409: the first is still running), or made
  for another request (422).
"""

from __future__ import annotations

import hashlib
import tempfile
from datetime import timedelta
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import Table, delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from casefile.clock import utcnow
from casefile.db import dialect_insert
from casefile.error_handlers import app_error_response
from casefile.errors import Conflict, ErrorDetail, ValidationFailed
from casefile.models import IdempotencyKey

if TYPE_CHECKING:
    from starlette.requests import Request

    from casefile.runtime import Runtime

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
KEY_MAX_LENGTH = 255
KEEP_FOR = timedelta(hours=24)
STORED_BODY_LIMIT = 1024 * 1024  # a larger answer is sent, not stored: a retry runs again
_SPOOL_IN_MEMORY = 1024 * 1024  # a larger request body is hashed through a temporary file
_CHUNK = 64 * 1024
# Not replayed: they describe the first answer's moment, not its content.
_NOT_STORED = frozenset(
    {"content-length", "date", "server", "x-request-id", "x-client-request-id", "retry-after"}
)
_keys = cast(Table, IdempotencyKey.__table__)
_STATE = "idempotency"


class Replayed(Exception):
    """The stored answer of the key's first request, raised where the caller becomes known and
    answered by `replay_response`."""

    def __init__(self, stored: dict[str, Any]) -> None:
        super().__init__("idempotent replay")
        self.stored = stored


async def replay_response(_request: Request, exc: Exception) -> Response:
    stored = cast(Replayed, exc).stored
    response = Response(content=stored["body"] or b"", status_code=stored["status_code"])
    for name, value in stored["headers"] or ():
        response.headers.append(name, value)
    response.headers[REPLAYED_HEADER] = "true"
    return response


def _key_problem(key: str) -> str | None:
    if not 1 <= len(key) <= KEY_MAX_LENGTH:
        return f"{HEADER} must be 1 to {KEY_MAX_LENGTH} characters"
    if not key.isascii() or not key.isprintable():
        return f"{HEADER} must be printable ASCII"
    return None


async def reserve(request: Request, session: AsyncSession, principal_id: str) -> None:
    """Reserve the request's key for `principal_id`, or raise: `Replayed`, 409 (the first request
    with this key is still running), 422 (the key was used for another request)."""
    pending: dict[str, Any] | None = request.scope.get("state", {}).get(_STATE)
    if pending is None or "principal_id" in pending:  # no key, or reserved by this very request
        return
    now = utcnow()
    row = {
        "principal_id": principal_id,
        "key": pending["key"],
        "method": request.method,
        "path": request.url.path[:2048],
        "request_hash": pending["hash"],
        "created_at": now,
        "expires_at": now + KEEP_FOR,
    }
    if session.info.get("write"):
        await _reserve_in(session, row, now)
    else:
        # A route that streams its body reads in its transaction: the key is reserved on its own
        # (and released by the middleware if the request fails).
        runtime: Runtime = request.app.state.runtime
        async with runtime.db.transaction(write=True) as own:
            await _reserve_in(own, row, now)
    pending["principal_id"] = principal_id


async def _reserve_in(session: AsyncSession, row: dict[str, Any], now: Any) -> None:
    inserted = await session.execute(dialect_insert(session)(_keys).values(row).on_conflict_do_nothing())
    if getattr(inserted, "rowcount", 0) == 1:
        return
    k = _keys.c
    where = (k.principal_id == row["principal_id"], k.key == row["key"])
    # A key past its 24 h is free again.
    renewed = await session.execute(update(_keys).where(*where, k.expires_at < now).values(row))
    if getattr(renewed, "rowcount", 0) == 1:
        return
    existing = (await session.execute(select(_keys).where(*where))).one()
    if existing.request_hash != row["request_hash"]:
        raise ValidationFailed(
            f"This {HEADER} was used for another request",
            details=[ErrorDetail(HEADER, "sent before with another method, path or body")],
        )
    if existing.status_code is None:
        raise Conflict(f"The first request with this {HEADER} is still running; retry later")
    raise Replayed({"status_code": existing.status_code, "headers": existing.headers, "body": existing.body})


async def purge_expired(runtime: Runtime) -> int:
    """Delete the keys past their 24 h (the retention sweep, `trash.worker`)."""
    async with runtime.db.transaction(write=True) as session:
        result = await session.execute(delete(_keys).where(_keys.c.expires_at < utcnow()))
    return int(getattr(result, "rowcount", 0) or 0)


class IdempotencyMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        key = Headers(scope=scope).get(HEADER)
        if key is None:
            await self.app(scope, receive, send)
            return
        problem = _key_problem(key)
        if problem is not None:
            refusal = app_error_response(ValidationFailed(problem, details=[ErrorDetail(HEADER, problem)]))
            await refusal(scope, receive, send)
            return
        with tempfile.SpooledTemporaryFile(max_size=_SPOOL_IN_MEMORY) as body:
            digest = hashlib.sha256(f"{scope['method']} {scope['path']}\n".encode())
            disconnected = await _read_body(receive, body, digest)
            pending: dict[str, Any] = {"key": key, "hash": digest.hexdigest()}
            scope.setdefault("state", {})[_STATE] = pending
            await self.app(
                scope, _replay_body(body, disconnected, receive), _Answer(scope, send, pending).send
            )


async def _read_body(receive: Receive, spool: Any, digest: Any) -> bool:
    """Read the whole request body into `spool`; whether the client went away meanwhile."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return True
        chunk = message.get("body", b"")
        digest.update(chunk)
        spool.write(chunk)
        if not message.get("more_body", False):
            return False


def _replay_body(spool: Any, disconnected: bool, receive: Receive) -> Receive:
    """The body read by the middleware, to the app, as it came."""
    size = _size(spool)
    done = False

    async def replay() -> Message:
        nonlocal done
        if done:
            return {"type": "http.disconnect"} if disconnected else await receive()
        chunk = spool.read(_CHUNK)
        more = spool.tell() < size
        done = not more
        return {"type": "http.request", "body": chunk, "more_body": more}

    return replay


def _size(spool: Any) -> int:
    spool.seek(0, 2)
    size: int = spool.tell()
    spool.seek(0)
    return size


class _Answer:
    """Holds the answer back until it is whole, stores it under the key, then sends it."""

    def __init__(self, scope: Scope, send: Send, pending: dict[str, Any]) -> None:
        self.scope, self.downstream, self.pending = scope, send, pending
        self.held: list[Message] = []
        self.size = 0
        self.passing = False  # too large to store: sent as it comes

    async def send(self, message: Message) -> None:
        if self.passing or "principal_id" not in self.pending:
            await self.downstream(message)
            return
        self.held.append(message)
        if message["type"] == "http.response.body":
            self.size += len(message.get("body", b""))
            if self.size > STORED_BODY_LIMIT:
                await self._release()
                return
            if not message.get("more_body", False):
                await self._store()
                for held in self.held:
                    await self.downstream(held)
                self.held = []

    async def _release(self) -> None:
        self.passing = True
        await _forget(self.scope, self.pending)
        for held in self.held:
            await self.downstream(held)
        self.held = []

    async def _store(self) -> None:
        start = self.held[0]
        status = int(start["status"])
        if status >= 500:  # a failure of ours: the retry may run again
            await _forget(self.scope, self.pending)
            return
        headers = [
            [name.decode("latin-1"), value.decode("latin-1")]
            for name, value in start.get("headers", [])
            if name.decode("latin-1").lower() not in _NOT_STORED
        ]
        body = b"".join(m.get("body", b"") for m in self.held[1:])
        runtime: Runtime = self.scope["app"].state.runtime
        k = _keys.c
        async with runtime.db.transaction(write=True) as session:
            await session.execute(
                update(_keys)
                .where(k.principal_id == self.pending["principal_id"], k.key == self.pending["key"])
                .values(status_code=status, headers=headers, body=body)
            )


async def _forget(scope: Scope, pending: dict[str, Any]) -> None:
    runtime: Runtime = scope["app"].state.runtime
    k = _keys.c
    async with runtime.db.transaction(write=True) as session:
        await session.execute(
            delete(_keys).where(
                k.principal_id == pending["principal_id"], k.key == pending["key"], k.status_code.is_(None)
            )
        )
