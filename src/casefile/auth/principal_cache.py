"""The authenticated caller's facts, kept in the process so that a request with a known token or
API key needs no database (or Redis) round trip to authenticate.

What is kept, per credential: for an access token (by session id and user), the user's role and
active flag and whether the session is on the deny-list; for an API key (by the hash of the key),
the principal it makes (its permissions cut to its creator's role, its case list, its creator)
and its expiry. The token itself (signature, expiry) is still checked on every request.

Invalidation. Any committed change to the tables those facts come from (users, login sessions,
the deny-list, API keys, groups and members, case grants and walls) empties the cache:

- within the process at once: the commit bumps the process's generation before the response of
  the changing request is sent; an entry filled under an older generation is never served (so a
  request that read the old state while the change was committing cannot put it back);
- across processes through Redis when `CASEFILE_REDIS_URL` is set: the commit increments a
  shared counter, and each process compares it with the one it saw at most every
  `SHARED_CHECK_SECONDS` (0.5 s) before serving from its cache. A revoked key or a logged-out
  token is therefore refused by every process within 0.5 s of the commit (bound stated as
  ≤ 1 s). If Redis cannot be read, nothing is served from the cache (the database decides), and
  what was cached before is dropped; a change committed while Redis is down is signalled again
  every 0.1 s until Redis answers (the bound then runs from Redis's return);
- without Redis, other processes (a second `casefile serve` worker, the CLI) cannot signal: an
  entry is then served for at most `UNSHARED_MAX_AGE_SECONDS` (1 s) after it was read.

The changes are found by SQLAlchemy session events (`watch_session_changes`), not by the call
sites, so a new way of changing a user or a grant cannot forget to invalidate.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError
from sqlalchemy import event
from sqlalchemy import inspect as sa_inspect
from sqlalchemy.orm import ORMExecuteState, Session, UOWTransaction
from sqlalchemy.sql.dml import UpdateBase

from casefile.db import after_commit, transaction_state

log = logging.getLogger(__name__)

SHARED_CHECK_SECONDS = 0.5
UNSHARED_MAX_AGE_SECONDS = 1.0
# With Redis an entry still lives no longer than this: the API key's `last_used_at` is written
# when its entry is filled (at most once a minute, auth.service.LAST_USED_RESOLUTION).
SHARED_MAX_AGE_SECONDS = 30.0
MAX_ENTRIES = 10_000
RESIGNAL_SECONDS = 0.1

# The tables whose rows decide who a caller is and what it may reach.
WATCHED_TABLES = frozenset(
    {
        "users",
        "auth_sessions",
        "revoked_sessions",
        "api_keys",
        "groups",
        "group_members",
        "case_grants",
        "case_walls",
    }
)
# A new login session or a new API key changes no cached caller.
_NEW_IS_NEUTRAL = frozenset({"auth_sessions", "api_keys"})
# Bookkeeping columns that change no caller's rights.
_NEUTRAL_COLUMNS = {"users": frozenset({"last_login_at"}), "api_keys": frozenset({"last_used_at"})}
# The cache, given to every session's `info` by the runtime; and the flag, in the transaction's
# state, that its invalidation after the commit is already registered.
INFO_CACHE = "principal_cache"
INFO_CHANGED = "principals_changed"
# Execution option for a statement on a watched table that changes no caller (`last_used_at`).
NEUTRAL = "principal_neutral"


@dataclass(frozen=True)
class Ticket:
    generation: int
    taken_at: float  # time.monotonic()


class PrincipalCache:
    def __init__(self, redis: Redis | None, key_prefix: str) -> None:
        self.redis = redis
        self.shared_key = f"{key_prefix}:principal-generation"
        self.max_age = SHARED_MAX_AGE_SECONDS if redis is not None else UNSHARED_MAX_AGE_SECONDS
        self._generation = 0
        self._shared_seen: bytes | str | None = None
        self._checked_at = float("-inf")
        self._entries: dict[Hashable, tuple[int, float, Any]] = {}
        self._resignal: asyncio.Task[None] | None = None

    async def generation(self) -> Ticket | None:
        """The ticket to look up and keep an entry with, taken before the database is read, after
        catching up with other processes' changes; None when Redis cannot be read (then nothing
        may be served from, or kept in, the cache)."""
        now = time.monotonic()
        if self.redis is not None and now - self._checked_at >= SHARED_CHECK_SECONDS:
            try:
                shared = await self.redis.get(self.shared_key)
            except (RedisError, OSError):
                log.warning("principal cache: Redis unreadable, authenticating from the database")
                # A change may be signalled while we cannot read: nothing cached before the outage
                # is served after it.
                self._bump()
                self._checked_at = float("-inf")
                return None
            if shared != self._shared_seen:
                self._shared_seen = shared
                self._bump()
            self._checked_at = now
        return Ticket(self._generation, now)

    def get(self, key: Hashable, ticket: Ticket | None) -> Any:
        if ticket is None or ticket.generation != self._generation:
            return None
        entry = self._entries.get(key)
        if entry is None:
            return None
        tagged, read_at, value = entry
        if tagged != ticket.generation or ticket.taken_at - read_at > self.max_age:
            self._entries.pop(key, None)
            return None
        return value

    def put(self, key: Hashable, ticket: Ticket | None, value: Any) -> None:
        """Keep `value`, read from the database after `ticket` was taken: if anything changed
        since, the entry is already stale and is not kept. Its age counts from the ticket (the
        read may have started before a change committed, and ended after)."""
        if ticket is None or ticket.generation != self._generation:
            return
        if len(self._entries) >= MAX_ENTRIES:
            self._entries.clear()  # rare (10,000 live credentials in one process); refilled on use
        self._entries[key] = (ticket.generation, ticket.taken_at, value)

    def _bump(self) -> None:
        self._generation += 1
        self._entries.clear()

    async def invalidate(self) -> None:
        """A watched change has committed: forget every entry here, and tell the other processes."""
        self._bump()
        if self.redis is None:
            return
        try:
            seen = await self.redis.incr(self.shared_key)
        except (RedisError, OSError):
            # Redis is down: the other processes cannot read the counter either, so they serve
            # nothing from their caches (see `generation`) while it is. Keep trying to signal, so
            # that one which did not notice a short outage hears of the change once Redis is back.
            log.exception("principal cache: could not signal a change; retrying in the background")
            if self._resignal is None or self._resignal.done():
                self._resignal = asyncio.create_task(self._signal_until_it_works())
            return
        # Our own increment: no need to empty the cache again at the next check, unless another
        # process changed something too (then the counter moves past this value).
        self._shared_seen = str(seen).encode()

    async def _signal_until_it_works(self) -> None:
        assert self.redis is not None
        while True:
            await asyncio.sleep(RESIGNAL_SECONDS)
            try:
                await self.redis.incr(self.shared_key)
            except (RedisError, OSError):
                continue
            return


def _mark(session: Session) -> None:
    """The session's transaction changes who a caller is: drop the cached callers once it has
    committed (before the request's answer is sent; never if it rolls back)."""
    cache: PrincipalCache | None = session.info.get(INFO_CACHE)
    state = transaction_state(session)
    if cache is not None and not state.get(INFO_CHANGED):
        state[INFO_CHANGED] = True
        after_commit(session, cache.invalidate)


def _table_of(obj: Any) -> str | None:
    return getattr(getattr(obj, "__table__", None), "name", None)


def _changes_a_caller(obj: Any, *, new: bool) -> bool:
    table = _table_of(obj)
    if table not in WATCHED_TABLES:
        return False
    if new:
        return table not in _NEW_IS_NEUTRAL
    neutral = _NEUTRAL_COLUMNS.get(table)
    if not neutral:
        return True
    return any(attr.history.has_changes() for attr in sa_inspect(obj).attrs if attr.key not in neutral)


def _after_flush(session: Session, _flush: UOWTransaction) -> None:
    if INFO_CACHE not in session.info:
        return
    if (
        any(_changes_a_caller(o, new=True) for o in session.new)
        or any(_changes_a_caller(o, new=False) for o in session.dirty)
        or any(_table_of(o) in WATCHED_TABLES for o in session.deleted)
    ):
        _mark(session)


def _do_orm_execute(state: ORMExecuteState) -> None:
    statement = state.statement
    if not isinstance(statement, UpdateBase) or INFO_CACHE not in state.session.info:
        return
    table = getattr(getattr(statement, "table", None), "name", None)
    if table in WATCHED_TABLES and not state.execution_options.get(NEUTRAL):
        _mark(state.session)


def watch_session_changes() -> None:
    """Listen (once per process: listening twice is a no-op check) for changes to the watched
    tables in any session that carries a cache in its `info` (`_mark` registers the invalidation
    to run after the commit)."""
    if not event.contains(Session, "after_flush", _after_flush):
        event.listen(Session, "after_flush", _after_flush)
        event.listen(Session, "do_orm_execute", _do_orm_execute)
