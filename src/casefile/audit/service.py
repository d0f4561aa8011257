"""Recording to the audit trail, and listing it.

`record(session, action, ...)` is the one way to write an entry. The entry belongs to the
session's transaction: it is inserted just before that transaction commits (`db.before_commit`),
and vanishes with it if it rolls back, so a change and its entry commit together. Who and where
come from the request's context (`casefile.request_context`); outside a request the actor is the
system. Each entry carries its own content hash (`audit.hashing`); nothing shared with other
requests is read, locked or counted: the sequencer (`audit.sequencer`) places committed entries
in the log afterwards.

What a request reads is recorded with `record_read`, committed with the entries of concurrent
reads by the process's `ReadAppender` (group commit) before the read answers; what was refused,
with `record_apart`, in a short transaction of its own (a refused request's transaction rolls
back).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import inspect
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.audit import repository
from casefile.audit.hashing import content_hash, entry_fields
from casefile.audit.repository import AuditFilters
from casefile.clock import format_timestamp, new_id, utcnow
from casefile.db import Database, database_of, pending_rows, take_pending_rows
from casefile.listing import ListQuery
from casefile.request_context import ActorType, current_context

Outcome = Literal["success", "denied", "failed"]

# Events that record a change by someone, and the action their entry is recorded under (the
# event's own name unless said here). Events of background work (AI processing, a document's
# processing result, system errors) are the system's bookkeeping, not someone's act.
_EVENT_ACTIONS = {
    "user.login": "auth.login",
    "user.logout": "auth.logout",
    "case.access_changed": "access.update",
}
_UNAUDITED_EVENT_GROUPS = ("ai.",)
# `audit.tree_head` announces the log itself: recording it would make every head a new entry.
_UNAUDITED_EVENTS = frozenset({"document.processed", "system.error", "audit.tree_head"})


# The fields of a document event's payload that are the document's own words or its content's
# hash: left out of its audit entry
# (a purge leaves no text of a document in the database: docs/decisions/0028-document-versions.md),
# and erased from the event itself by the purge (documents.erasure).
DOCUMENT_TEXT_FIELDS = frozenset(
    {"title", "description", "tags", "document_type", "file_name", "sha256", "summary", "changes"}
)


def without_document_text(data: dict[str, object]) -> dict[str, object]:
    """A document event's payload without its text: `changes` becomes the names changed."""
    kept = {name: value for name, value in data.items() if name not in DOCUMENT_TEXT_FIELDS}
    changes = data.get("changes")
    if isinstance(changes, dict):
        kept["changed_fields"] = sorted(changes)
    return kept


@dataclass(frozen=True)
class Actor:
    """Who acted, when it is not (or not yet) the request's authenticated caller: e.g. the user
    who is signing in."""

    type: ActorType
    id: str | None
    user_id: str | None


def record(
    session: AsyncSession,
    action: str,
    *,
    resource_type: str | None = None,
    resource_id: str | None = None,
    case_id: str | None = None,
    outcome: Outcome = "success",
    details: Mapping[str, Any] | None = None,
    actor: Actor | None = None,
) -> None:
    """Add an entry to the session's transaction; it is inserted when the transaction commits."""
    entry = _entry(
        action,
        resource_type=resource_type,
        resource_id=resource_id,
        case_id=case_id,
        outcome=outcome,
        details=details,
        actor=actor,
    )
    pending_rows(session, append_pending).append(entry)


def _entry(
    action: str,
    *,
    resource_type: str | None,
    resource_id: str | None,
    case_id: str | None,
    outcome: Outcome,
    details: Mapping[str, Any] | None,
    actor: Actor | None,
) -> dict[str, Any]:
    """An entry's values and their content hash; who and where from the request's context."""
    context = current_context()
    if actor is None:
        actor = (
            Actor(context.actor_type, context.actor_id, context.user_id)
            if context is not None
            else Actor("system", None, None)
        )
    now = utcnow()
    # Milliseconds, as the API shows it: the stored time gives back the hashed text exactly.
    at = now.replace(microsecond=now.microsecond // 1000 * 1000)
    entry = {
        "id": new_id("aud"),
        "at": at,
        "actor_type": actor.type,
        "actor_id": actor.id,
        "user_id": actor.user_id,
        "action": action,
        "resource_type": resource_type,
        "resource_id": resource_id,
        "case_id": case_id,
        "outcome": outcome,
        "ip": context.ip if context else None,
        "user_agent": context.user_agent if context else None,
        "request_id": context.request_id if context else None,
        "details": dict(details or {}),
    }
    entry["hash"] = content_hash({**entry, "at": format_timestamp(at)})
    return entry


async def append_pending(session: AsyncSession) -> None:
    """Insert the transaction's entries, in one statement (the before-commit action of `record`)."""
    pending = take_pending_rows(session, append_pending)
    if pending:
        await repository.insert_entries(session, pending)


async def record_apart(
    db: Database,
    action: str,
    *,
    resource_type: str | None = None,
    resource_id: str | None = None,
    case_id: str | None = None,
    outcome: Outcome = "success",
    details: Mapping[str, Any] | None = None,
    actor: Actor | None = None,
) -> None:
    """Record an entry in a short write transaction of its own (reads; refused or failed
    requests, whose own transaction rolls back)."""
    async with db.transaction(write=True) as session:
        record(
            session,
            action,
            resource_type=resource_type,
            resource_id=resource_id,
            case_id=case_id,
            outcome=outcome,
            details=details,
            actor=actor,
        )


async def record_read(
    session: AsyncSession,
    action: str,
    *,
    resource_type: str | None = None,
    resource_id: str | None = None,
    case_id: str | None = None,
    details: Mapping[str, Any] | None = None,
    actor: Actor | None = None,
) -> None:
    """Record what a read request (`session` is its transaction) read: committed before this
    returns, by the process's `ReadAppender`, which commits the entries of concurrent reads
    together (one INSERT and one commit for all of them)."""
    # The read's own transaction does not write (on SQLite it cannot): its database's appender does.
    entry = _entry(
        action,
        resource_type=resource_type,
        resource_id=resource_id,
        case_id=case_id,
        outcome="success",
        details=details,
        actor=actor,
    )
    await _appender(database_of(session)).append(entry)


class ReadAppender:
    """Group commit of read entries for one process's database: a read hands its entry over and
    waits until the batch holding it has committed (so, as before, a read's entry is in the
    trail before its answer is sent). One batch at a time, in arrival order; while one commits,
    the next gathers. On PostgreSQL the batches use an engine of their own (one connection), so
    that reads waiting with their own connections can never starve the appender of one."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._own: Database | None = None
        self._queue: list[tuple[dict[str, Any], asyncio.Future[None]]] = []
        self._task: asyncio.Task[None] | None = None

    def _database(self) -> Database:
        if self.db.is_sqlite:
            return self.db  # its writes have their own engine already (reads use a second one)
        if self._own is None:
            self._own = Database(self.db.settings.model_copy(update={"db_pool_size": 1}))
        return self._own

    async def append(self, entry: dict[str, Any]) -> None:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.append((entry, done))
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._commit_batches())
        await asyncio.shield(done)  # a read whose client left still gets its entry committed

    async def _commit_batches(self) -> None:
        while self._queue:
            batch, self._queue = self._queue[:READ_BATCH_MAX], self._queue[READ_BATCH_MAX:]
            try:
                await self._commit([entry for entry, _ in batch])
            except BaseException as error:
                for _, done in batch:
                    if not done.done():
                        done.set_exception(error if isinstance(error, Exception) else RuntimeError("stopped"))
                if not isinstance(error, Exception):
                    raise  # cancelled (shutdown): the waiting reads fail instead of hanging
                continue
            for _, done in batch:
                if not done.done():
                    done.set_result(None)

    async def _commit(self, entries: list[dict[str, Any]]) -> None:
        """One transaction on a plain connection: nothing here needs the ORM's session, whose
        bookkeeping cost more CPU than the statements. A connection found dead is replaced once
        (as `db.RetryingSession` does): nothing of the batch had been written."""
        engine = self._database().engine
        try:
            async with engine.begin() as connection:
                await repository.insert_entries(connection, entries)
        except DBAPIError as error:
            if not error.connection_invalidated:
                raise
            async with engine.begin() as connection:
                await repository.insert_entries(connection, entries)

    async def aclose(self) -> None:
        _APPENDERS.pop(self.db, None)  # the appender refers to its database: no cycle left behind
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)
        if self._own is not None:
            await self._own.dispose()


READ_BATCH_MAX = 500
_APPENDERS: weakref.WeakKeyDictionary[Database, ReadAppender] = weakref.WeakKeyDictionary()


def _appender(db: Database) -> ReadAppender:
    appender = _APPENDERS.get(db)
    if appender is None:
        appender = _APPENDERS[db] = ReadAppender(db)
        db.on_dispose.append(appender.aclose)
    return appender


def record_event(session: AsyncSession, name: str, data: Mapping[str, Any], event_id: str) -> None:
    """The entry of an event (`events.outbox.emit` calls this for every event): creates, updates
    and deletes are recorded through the events they emit. The resource is the event's group
    (`case.updated` → a case) and its id the payload's `<group>_id`."""
    if name in _UNAUDITED_EVENTS or name.startswith(_UNAUDITED_EVENT_GROUPS):
        return
    group = name.split(".", 1)[0]
    resource_id = data.get(f"{group}_id")
    actor = None
    if name == "user.login":  # nobody is authenticated yet: the actor is the user signing in
        actor = Actor("user", data["user_id"], data["user_id"])
    kept = without_document_text(dict(data)) if group == "document" else dict(data)
    record(
        session,
        _EVENT_ACTIONS.get(name, name),
        resource_type=group,
        resource_id=resource_id if isinstance(resource_id, str) else None,
        case_id=data.get("case_id"),
        details={"event_id": event_id, "data": kept},
        actor=actor,
    )


async def trail_exists(session: AsyncSession) -> bool:
    """Whether the database has the audit trail this code writes (the verifiable log of migration
    0017; a database an older casefile migrated does not, until it is migrated)."""
    return await session.run_sync(lambda sync: inspect(sync.connection()).has_table("audit_log_state"))


# --- reading -------------------------------------------------------------------------------------


async def list_entries(
    session: AsyncSession, filters: AuditFilters, query: ListQuery
) -> tuple[list[dict[str, Any]], str | None]:
    rows, next_cursor = await repository.page(session, filters, query)
    return [entry_fields(row) for row in rows], next_cursor


async def list_case_entries(
    session: AsyncSession, case_id: str, filters: AuditFilters, query: ListQuery
) -> tuple[list[dict[str, Any]], str | None]:
    """A case's own trail (`GET /cases/{id}/audit`); the read is itself recorded."""
    found = await list_entries(session, replace(filters, case_id=case_id), query)
    await record_read(session, "audit.read", resource_type="case", resource_id=case_id, case_id=case_id)
    return found


def parse_filters(
    *,
    actor_id: str | None,
    case_id: str | None,
    action: str | None,
    since: datetime | None,
    until: datetime | None,
) -> AuditFilters:
    """The list's filters (times already in UTC: `schemas.QueryTime`)."""
    return AuditFilters(actor_id=actor_id, case_id=case_id, action=action, since=since, until=until)
