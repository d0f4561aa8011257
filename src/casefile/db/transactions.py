"""One transaction per request or job, and what runs at its end: the before-commit actions (rows
gathered during the transaction and written together, `pending_rows`), the commit, then the
after-commit actions (work outside the database that must wait for the change to be durable)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

T = TypeVar("T")
log = logging.getLogger(__name__)


AfterCommit = Callable[[], Awaitable[None]]
BeforeCommit = Callable[[AsyncSession], Awaitable[None]]
_TRANSACTION_STATE = "transaction_state"


def transaction_state(session: AsyncSession | Session) -> dict[str, Any]:
    """Scratch space that lives until the session's current transaction ends (see `finish`)."""
    state: dict[str, Any] = session.info.setdefault(_TRANSACTION_STATE, {})
    return state


def after_commit(session: AsyncSession | Session, action: AfterCommit) -> None:
    """Run `action` once the session's transaction has committed (never if it rolls back).
    For work outside the database that must not happen unless the change is durable, such as
    removing a file that no committed row refers to any more, or dropping cached callers after a
    change to who they are (`auth.principal_cache`, from a flush: the synchronous `Session`)."""
    transaction_state(session).setdefault("after_commit", []).append(action)


def before_commit(session: AsyncSession, action: BeforeCommit, *, first: bool = False) -> None:
    """Run `action` in the session's transaction just before it commits (never if it rolls back;
    if the action fails, the transaction rolls back). For work that must be the transaction's last,
    such as writing the rows gathered during the transaction in one statement (`pending_rows`).
    `first`: run it before the actions registered without `first` (the outbox's rows, ahead of
    the audit entries)."""
    actions = transaction_state(session).setdefault("before_commit", [])
    if first:
        actions.insert(0, action)
    else:
        actions.append(action)


def pending_rows(session: AsyncSession, writer: BeforeCommit, *, first: bool = False) -> list[dict[str, Any]]:
    """The rows this transaction will write with `writer` just before it commits: append to the
    list. The first call registers `writer` as a before-commit action (see `before_commit`), which
    takes the rows with `take_pending_rows`. Rows written together at the end cost one INSERT for
    all of them, instead of one per row as each is recorded (the outbox's events, audit entries)."""
    state = transaction_state(session)
    rows: list[dict[str, Any]] | None = state.get(_pending_key(writer))
    if rows is None:
        rows = state[_pending_key(writer)] = []
        before_commit(session, writer, first=first)
    return rows


def take_pending_rows(session: AsyncSession, writer: BeforeCommit) -> list[dict[str, Any]]:
    """The rows `pending_rows(session, writer)` gathered, handed over once (then gone)."""
    rows: list[dict[str, Any]] = transaction_state(session).pop(_pending_key(writer), [])
    return rows


def _pending_key(writer: BeforeCommit) -> str:
    return f"pending:{writer.__module__}.{writer.__qualname__}"


async def finish(session: AsyncSession, *, commit: bool) -> None:
    """End the session's transaction: run the before-commit actions and commit, then run the
    after-commit actions; or roll back."""
    if not commit:
        session.info.pop(_TRANSACTION_STATE, None)
        await session.rollback()
        return
    try:
        # While the state still exists: an action reads it (the audit entries to append).
        for before in transaction_state(session).get("before_commit", []):
            await before(session)
    except BaseException:
        session.info.pop(_TRANSACTION_STATE, None)
        await session.rollback()
        raise
    try:
        await session.commit()
    finally:
        # Read after the commit: its own flush may still have added an after-commit action.
        state: dict[str, Any] = session.info.pop(_TRANSACTION_STATE, {})
    for action in state.get("after_commit", []):
        try:
            await action()
        except Exception:
            # The change is committed; a failed follow-up is logged and left for the next sweep.
            log.exception("after-commit action failed")


async def commit_early(session: AsyncSession) -> None:
    """Commit the request's transaction before the handler's slow part (an upload's body, a test
    delivery's HTTP call), so no transaction or connection is held across it."""
    await finish(session, commit=True)
