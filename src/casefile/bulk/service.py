"""Bulk jobs: asked for in a request, run by the bulk worker one matter at a time.

Each matter is changed by the single-case rules (`cases.service`) in a transaction of its own,
which also records the matter's outcome and moves the job's progress on, under the worker's lease
(fenced by its token): a worker that dies mid-job leaves every matter done or not done, and the
next claim goes on from the first not done. A matter that fails (not visible to the caller, a
status move not allowed, a required field missing, an unknown assignee…) fails alone, with the
reason its single-case request would have given. Each change emits the events its single-case
request emits, attributed to the caller (the audit trail per matter)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.access.matter import Level, case_for
from casefile.auth.acting import acting_as, context_of, principal_of
from casefile.auth.permissions import Principal
from casefile.bulk.schemas import BulkJobOut, BulkRequest
from casefile.cases import service as cases
from casefile.cases.schemas import CaseUpdate
from casefile.clock import utcnow
from casefile.customfields import service as custom_fields
from casefile.error_handlers import validated
from casefile.errors import AppError, AuthError, ErrorDetail, NotFound
from casefile.models import BulkJob, User
from casefile.request_context import request_context
from casefile.runtime import Runtime

log = logging.getLogger(__name__)

# A claim's lease, renewed by every matter done: a matter takes milliseconds.
LEASE_SECONDS = 60.0


async def create_job(session: AsyncSession, principal: Principal, body: BulkRequest) -> BulkJob:
    """Queue the job; what does not depend on the matter is checked now (422)."""
    action = body.action
    if action.type == "assign" and await session.get(User, action.user_id) is None:
        raise NotFound.referenced([ErrorDetail("action.user_id", "User not found")])
    if action.type == "set_custom_field":
        defs = await custom_fields.definitions(session, "case")
        defs.named(action.name, "action.name", reference=True)
    now = utcnow()
    job = BulkJob(
        action=action.model_dump(mode="json"),
        case_ids=body.case_ids,
        results=[],
        processed=0,
        succeeded=0,
        failed=0,
        acting_as=acting_as(principal),
        requested_by=principal.actor_id,
        status="pending",
        attempts_made=0,
        max_attempts=20,
        lease_token=0,
        next_attempt_at=now,
        created_at=now,
        updated_at=now,
    )
    session.add(job)
    await session.flush()
    return job


async def job_for(session: AsyncSession, principal: Principal, job_id: str) -> BulkJob:
    """The job, for whoever asked for it or an administrator; 404 for anyone else."""
    job = await session.get(BulkJob, job_id)
    if job is None or (job.requested_by != principal.actor_id and not principal.is_admin_user):
        raise NotFound("Bulk job not found")
    return job


def dump(job: BulkJob) -> dict[str, Any]:
    return BulkJobOut.dump(
        {
            **{c.key: getattr(job, c.key) for c in BulkJob.__table__.columns},
            "total": len(job.case_ids),
        }
    )


async def _apply(session: AsyncSession, principal: Principal, case_id: str, action: dict[str, Any]) -> None:
    """One matter, by the rules of its single-case request."""
    case = await case_for(session, principal, case_id, Level.WRITE)
    kind = action["type"]
    if kind == "assign":
        await cases.add_assignee(session, principal, case, action["user_id"])
        return
    # Read as the single-case request's body: a matter the action would take past a rule (more
    # tags than a matter holds) fails with that rule's 422, like its PATCH.
    if kind == "status":
        update = validated(CaseUpdate, {"status": action["status"]})
    elif kind == "tag":
        removed = {t.lower() for t in action["remove"]}
        kept = [t for t in case.tags or [] if t.lower() not in removed]
        known = {t.lower() for t in kept}
        update = validated(CaseUpdate, {"tags": kept + [t for t in action["add"] if t.lower() not in known]})
    else:
        update = validated(CaseUpdate, {"custom_fields": {action["name"]: action["value"]}})
    await cases.update_case(session, principal, case, update)


@dataclass(frozen=True)
class Claim:
    job_id: str
    lease_token: int


async def claim_next(runtime: Runtime) -> Claim | None:
    """Lease the oldest due job (one whose worker died is due again when its lease runs out)."""
    now = utcnow()
    async with runtime.db.transaction(write=True) as session:
        job = await session.scalar(
            select(BulkJob)
            .where(BulkJob.due(now))
            .order_by(BulkJob.next_attempt_at)
            .limit(1)
            .with_for_update(skip_locked=True)
        )
        if job is None:
            return None
        if job.attempts_made >= job.max_attempts:  # it keeps killing its workers: stop here
            _finish(job, "failed")
            return None
        terms = job.take_lease(now, LEASE_SECONDS)
        job.status = "running"
        return Claim(job.id, terms["lease_token"])


def _finish(job: BulkJob, status: str) -> None:
    job.status = status
    job.finished_at = job.updated_at = utcnow()
    job.lease_expires_at = None


async def _held(session: AsyncSession, claim: Claim) -> BulkJob | None:
    return await session.scalar(
        select(BulkJob).where(BulkJob.held_by(claim.job_id, claim.lease_token)).with_for_update()
    )


def _record(job: BulkJob, case_id: str, error: dict[str, Any] | None) -> None:
    job.results = [
        *job.results,
        {"case_id": case_id, "outcome": "failed" if error else "succeeded", "error": error},
    ]
    job.processed += 1
    if error:
        job.failed += 1
    else:
        job.succeeded += 1
    now = job.updated_at = utcnow()
    job.lease_expires_at = now + timedelta(seconds=LEASE_SECONDS)  # the claim is alive
    if job.processed >= len(job.case_ids):
        _finish(job, "succeeded")


def _error_of(exc: Exception) -> dict[str, Any]:
    if isinstance(exc, AppError):
        details = [{"field": d.field, "message": d.message} for d in exc.details or []]
        return {"code": exc.code, "message": exc.message, "details": details or None}
    if isinstance(exc, AuthError):  # e.g. `write` on the matter missing: 403 for its own request
        return {"code": exc.error_code, "message": exc.description, "details": None}
    return {"code": "INTERNAL_ERROR", "message": "An unexpected error occurred", "details": None}


async def run_claim(runtime: Runtime, claim: Claim) -> None:
    """Do the claimed job's matters one by one until it is done or the lease is lost."""
    while True:
        failure: dict[str, Any] | None = None
        try:
            async with runtime.db.transaction(write=True) as session:
                job = await _held(session, claim)
                if job is None or job.status != "running":
                    return  # done, or taken over by another worker: nothing more is ours
                case_id = job.case_ids[job.processed]
                with request_context(context_of(job.acting_as)):
                    await _apply(session, principal_of(job.acting_as), case_id, job.action)
                _record(job, case_id, None)
                continue
        except (AppError, AuthError) as exc:
            failure = _error_of(exc)
        except Exception as exc:
            log.exception("bulk job %s: a matter failed unexpectedly", claim.job_id)
            failure = _error_of(exc)
        async with runtime.db.transaction(write=True) as session:
            job = await _held(session, claim)
            if job is None or job.status != "running":
                return
            _record(job, job.case_ids[job.processed], failure)
