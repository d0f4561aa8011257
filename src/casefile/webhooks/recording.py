"""Recording attempts' outcomes: `record_batch` writes any number of them in one transaction of
two statements, and starts a claim's attempts in one (`start_attempts`)."""

from __future__ import annotations

import functools
from datetime import timedelta
from typing import Any

from sqlalchemy import BindParameter, Boolean, Integer, String, Text, TextClause, bindparam, text
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.clock import utcnow
from casefile.db import UTCDateTime
from casefile.runtime import Runtime
from casefile.webhooks import circuit
from casefile.webhooks.delivery import DELIVERY_DEADLINE, Claim, Outcome, retry_delay

# The statements that claim and record a batch, whatever its size, join or insert a table of rows
# given as VALUES. SQLAlchemy does not cache the compilation of a VALUES construct (it compiled
# one per batch: a tenth of the worker's CPU), so they are SQL text, made once per row count and
# cached by SQLAlchemy like any text (which holds column and parameter names only, never values:
# the `noqa: S608` below); every parameter is typed, so a column that is NULL on every
# row keeps its type on PostgreSQL and datetimes are stored as the ORM stores them.
Columns = tuple[tuple[str, Any], ...]
_ATTEMPT_START: Columns = (
    ("id", String()),
    ("delivery_id", String()),
    ("number", Integer()),
    ("started_at", UTCDateTime()),
)
_FATE: Columns = (
    ("id", String()),
    ("lease_token", Integer()),
    ("status", String()),
    ("next_attempt_at", UTCDateTime()),
    ("status_code", Integer()),
    ("error", Text()),
    ("refund", Integer()),
)
_RESULT: Columns = (
    ("id", String()),
    ("lease_token", Integer()),
    ("duration_ms", Integer()),
    ("status_code", Integer()),
    ("success", Boolean()),
    ("error", Text()),
    ("response_body", Text()),
)


def _rows_sql(prefix: str, columns: Columns, n: int) -> tuple[str, list[BindParameter[Any]]]:
    """`(:p0_a, :p0_b), (:p1_a, :p1_b)...` for `n` rows, with its typed parameters."""
    names = [[f"{prefix}{i}_{name}" for name, _ in columns] for i in range(n)]
    sql = ", ".join("(" + ", ".join(f":{name}" for name in row) + ")" for row in names)
    binds = [
        bindparam(name, type_=type_) for row in names for name, (_, type_) in zip(row, columns, strict=True)
    ]
    return sql, binds


def _row_params(prefix: str, columns: Columns, rows: list[tuple[Any, ...]]) -> dict[str, Any]:
    return {
        f"{prefix}{i}_{name}": value
        for i, row in enumerate(rows)
        for (name, _), value in zip(columns, row, strict=True)
    }


@functools.lru_cache(maxsize=128)
def _start_attempts_sql(n: int) -> TextClause:
    rows, binds = _rows_sql("a", _ATTEMPT_START, n)
    sql = f"INSERT INTO delivery_attempts (id, delivery_id, number, started_at) VALUES {rows}"  # noqa: S608
    return text(sql).bindparams(*binds)


@functools.lru_cache(maxsize=128)
def _record_fates(n: int) -> TextClause:
    """Each delivery's next state, only where its lease is still the claim's (fencing)."""
    rows, binds = _rows_sql("f", _FATE, n)
    return text(
        f"WITH fate ({', '.join(name for name, _ in _FATE)}) AS (VALUES {rows}) "  # noqa: S608
        "UPDATE deliveries SET status = fate.status, lease_expires_at = NULL, "
        "last_status_code = fate.status_code, last_error = fate.error, updated_at = :now, "
        "succeeded_at = CASE WHEN fate.status = 'succeeded' THEN :now ELSE deliveries.succeeded_at END, "
        "next_attempt_at = COALESCE(fate.next_attempt_at, deliveries.next_attempt_at), "
        "max_attempts = deliveries.max_attempts + fate.refund "
        "FROM fate WHERE deliveries.id = fate.id AND deliveries.lease_token = fate.lease_token "
        "RETURNING deliveries.id"
    ).bindparams(*binds, bindparam("now", type_=UTCDateTime()))


@functools.lru_cache(maxsize=128)
def _record_results(n: int) -> TextClause:
    rows, binds = _rows_sql("r", _RESULT, n)
    return text(
        f"WITH result ({', '.join(name for name, _ in _RESULT)}) AS (VALUES {rows}) "  # noqa: S608
        "UPDATE delivery_attempts SET finished_at = :now, duration_ms = result.duration_ms, "
        "status_code = result.status_code, success = result.success, error = result.error, "
        "response_body = result.response_body FROM result WHERE delivery_attempts.id = result.id "
        # Fenced like the delivery: a claim that lost its lease (its attempt was closed as
        # interrupted by the take-over) never overwrites that record, nor another's.
        "AND delivery_attempts.finished_at IS NULL AND EXISTS (SELECT 1 FROM deliveries "
        "WHERE deliveries.id = delivery_attempts.delivery_id AND deliveries.lease_token = result.lease_token)"
    ).bindparams(*binds, bindparam("now", type_=UTCDateTime()))


async def record_batch(runtime: Runtime, outcomes: list[tuple[Claim, Outcome]]) -> None:
    """Write the outcomes of several attempts in one transaction of two statements, whatever their
    number: each delivery's next state (success, a retry time, or the dead-letter status), fenced by
    its claim's lease token (a claim that lost its lease changes nothing of its delivery), then each
    attempt row by its id. Either all are recorded or none is."""
    if not outcomes:
        return
    now = utcnow()
    fates: list[tuple[Any, ...]] = []
    results: list[tuple[Any, ...]] = []
    # Rows in delivery-id order, so two batches that share rows (only a stale claim and its
    # take-over can) rarely deadlock; the worker retries a failed batch one outcome at a time.
    for claim, outcome in sorted(outcomes, key=lambda item: item[0].delivery_id):
        status, next_at, refund = "succeeded", None, 0
        if outcome.retry_after is not None:
            # The receiver asked for time (429/503 with Retry-After): not one of the tries.
            status, next_at, refund = "retrying", now + timedelta(seconds=outcome.retry_after), 1
            if next_at > claim.first_attempt_at + DELIVERY_DEADLINE:
                status, next_at, refund = "dead", None, 0
        elif not outcome.success:
            next_at = now + timedelta(seconds=retry_delay(claim.retry_policy, claim.attempt))
            if claim.attempt >= claim.max_attempts or next_at > claim.first_attempt_at + DELIVERY_DEADLINE:
                status, next_at = "dead", None
            else:
                status = "retrying"
        fates.append(
            (
                claim.delivery_id,
                claim.lease_token,
                status,
                next_at,
                outcome.status_code,
                outcome.error,
                refund,
            )
        )
        results.append(
            (
                claim.attempt_id,
                claim.lease_token,
                outcome.duration_ms,
                outcome.status_code,
                outcome.success,
                outcome.error,
                outcome.response_body,
            )
        )
    n = len(outcomes)
    async with runtime.db.transaction(write=True) as session:
        # Deliveries first, then attempts: a concurrent claim locks a delivery and then updates its
        # lost attempt, so taking the locks in the same order means the two never deadlock.
        fenced = await session.execute(_record_fates(n), {"now": now, **_row_params("f", _FATE, fates)})
        held = set(fenced.scalars())
        await session.execute(_record_results(n), {"now": now, **_row_params("r", _RESULT, results)})
        # Only the outcomes of claims that still held their lease count for their webhook's circuit.
        circuit_results = [
            circuit.Result(
                claim.webhook_id, outcome.started_at, _kind(outcome), outcome.status_code, outcome.error
            )
            for claim, outcome in outcomes
            if claim.delivery_id in held
        ]
        await circuit.note(session, runtime.settings, circuit_results, now)


def _kind(outcome: Outcome) -> str:
    if outcome.success:
        return "success"
    if outcome.retry_after is not None:
        return "deferred"
    return "gone" if outcome.status_code == 410 else "failure"


async def record_outcome(runtime: Runtime, claim: Claim, outcome: Outcome) -> None:
    """Write one attempt's outcome (see `record_batch`)."""
    await record_batch(runtime, [(claim, outcome)])


async def start_attempts(session: AsyncSession, attempts: list[tuple[Any, ...]]) -> None:
    """Insert the started attempts of a claim: `(id, delivery_id, number, started_at)` each."""
    await session.execute(_start_attempts_sql(len(attempts)), _row_params("a", _ATTEMPT_START, attempts))
