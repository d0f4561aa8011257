"""Export jobs: asked for in a request (`create_export`), run by the export worker (`run_claim`)
with the leases every worker shares (`casefile.worker.lease`), as the bulk jobs are.

The job keeps its caller (`auth.acting`): the worker reads the matter with exactly the caller's
access, checked again when it starts (access taken away in between fails the job), and the entries
it writes name the caller. Before it writes the audit section it waits, up to `AUDIT_WAIT_SECONDS`,
for the sequencer to sign a tree head covering the matter's entries so far (the export's own
request included), so that each entry in the zip comes with its inclusion proof. The finished zip
goes to the content store under its SHA-256, its row records where, and `export.completed` is
emitted (which is also its audit entry) in the same transaction."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.access.matter import Level, case_for
from casefile.audit import service as audit
from casefile.auth.acting import acting_as, context_of, principal_of
from casefile.auth.permissions import Principal
from casefile.clock import utcnow
from casefile.errors import AppError, AuthError, Conflict, NotFound
from casefile.events.export_payloads import export_completed
from casefile.events.outbox import emit
from casefile.exports import build, contents
from casefile.exports.archive import ManifestFile
from casefile.exports.schemas import ExportOut
from casefile.models import AuditTreeHead, ExportJob
from casefile.request_context import request_context
from casefile.runtime import Runtime

log = logging.getLogger(__name__)

# A claim's lease: renewed with each file written (a 1 GiB document takes seconds).
LEASE_SECONDS = 300.0
PROGRESS_SECONDS = 1.0
AUDIT_WAIT_SECONDS = 30.0
AUDIT_POLL_SECONDS = 0.2


class LeaseLost(Exception):
    """Another worker took the job over (this one stalled past its lease): stop, change nothing."""


async def create_export(session: AsyncSession, principal: Principal, case_id: str) -> ExportJob:
    """Queue the export of a matter the caller may read (else 404); recorded as `export.requested`."""
    case = await case_for(session, principal, case_id, Level.READ)
    now = utcnow()
    job = ExportJob(
        case_id=case.id,
        acting_as=acting_as(principal),
        requested_by=principal.actor_id,
        status="pending",
        total_files=0,
        files_done=0,
        bytes_done=0,
        attempts_made=0,
        max_attempts=5,
        lease_token=0,
        next_attempt_at=now,
        created_at=now,
        updated_at=now,
    )
    session.add(job)
    await session.flush()
    audit.record(session, "export.requested", resource_type="export", resource_id=job.id, case_id=case.id)
    return job


async def export_for(session: AsyncSession, principal: Principal, export_id: str) -> ExportJob:
    """The export, for whoever asked for it or an administrator, while they may still see its
    matter; 404 for anyone else."""
    job = await session.get(ExportJob, export_id)
    if job is None or (job.requested_by != principal.actor_id and not principal.is_admin_user):
        raise NotFound("Export not found")
    await case_for(session, principal, job.case_id, Level.READ, not_found="Export not found")
    return job


def finished_content(job: ExportJob) -> tuple[str, int]:
    """The zip's key and size; 409 while the export is not finished."""
    if job.status != "succeeded" or job.sha256 is None or job.size is None:
        raise Conflict(f"The export is {job.status}: its content is there once it has succeeded")
    return job.sha256, job.size


async def record_download(session: AsyncSession, job: ExportJob, content_range: str | None = None) -> None:
    await audit.record_read(
        session,
        "export.downloaded",
        resource_type="export",
        resource_id=job.id,
        case_id=job.case_id,
        details={"sha256": job.sha256, "range": content_range},
    )


def dump(job: ExportJob) -> dict[str, Any]:
    return ExportOut.dump({c.key: getattr(job, c.key) for c in ExportJob.__table__.columns})


# --- the worker's side ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Claim:
    job_id: str
    lease_token: int


@dataclass
class Progress:
    total_files: int = 0
    files_done: int = 0
    bytes_done: int = 0
    saved_at: float = field(default_factory=time.monotonic)


async def claim_next(runtime: Runtime) -> Claim | None:
    """Lease the oldest due export (one whose worker died is due again when its lease runs out)."""
    now = utcnow()
    async with runtime.db.transaction(write=True) as session:
        job = await session.scalar(
            select(ExportJob)
            .where(ExportJob.due(now))
            .order_by(ExportJob.next_attempt_at)
            .limit(1)
            .with_for_update(skip_locked=True)
        )
        if job is None:
            return None
        if job.attempts_made >= job.max_attempts:  # it keeps killing its workers: stop here
            _finish(job, "failed")
            job.error = {"code": "INTERNAL_ERROR", "message": "The export stopped its worker repeatedly"}
            return None
        terms = job.take_lease(now, LEASE_SECONDS)
        job.status = "running"
        job.total_files = job.files_done = job.bytes_done = 0
        return Claim(job.id, terms["lease_token"])


def _finish(job: ExportJob, status: str) -> None:
    job.status = status
    job.finished_at = job.updated_at = utcnow()
    job.lease_expires_at = None


async def _held(session: AsyncSession, claim: Claim) -> ExportJob | None:
    return await session.scalar(
        select(ExportJob).where(ExportJob.held_by(claim.job_id, claim.lease_token)).with_for_update()
    )


async def _save_progress(runtime: Runtime, claim: Claim, progress: Progress) -> None:
    async with runtime.db.transaction(write=True) as session:
        job = await _held(session, claim)
        if job is None or job.status != "running":
            raise LeaseLost
        job.total_files, job.files_done = progress.total_files, progress.files_done
        job.bytes_done = progress.bytes_done
        now = job.updated_at = utcnow()
        job.lease_expires_at = now + timedelta(seconds=LEASE_SECONDS)
    progress.saved_at = time.monotonic()


async def _covering_head(runtime: Runtime, case_id: str, before: datetime) -> AuditTreeHead | None:
    """The newest signed head, once it covers the matter's entries made before `before` (or
    after `AUDIT_WAIT_SECONDS`, the newest there is: the summary then says what it left out)."""
    deadline = time.monotonic() + AUDIT_WAIT_SECONDS
    while True:
        async with runtime.db.transaction(write=False) as session:
            head = await contents.latest_head(session)
            if await contents.unproven(session, case_id, head, before) == 0 or time.monotonic() > deadline:
                return head
        await asyncio.sleep(AUDIT_POLL_SECONDS)


async def run_claim(runtime: Runtime, claim: Claim) -> None:
    """Build the claimed export and record its outcome, unless the lease was lost meanwhile."""
    async with runtime.db.transaction(write=False) as session:
        job = await session.get(ExportJob, claim.job_id)
        if job is None:
            return
        case_id, stored, created_at = job.case_id, job.acting_as, job.created_at
    principal = principal_of(stored)
    progress = Progress()
    built: build.Built | None = None
    try:
        with request_context(context_of(stored)):
            head = await _covering_head(runtime, case_id, utcnow())

            def total(count: int) -> None:
                progress.total_files = count

            async def on_file(entry: ManifestFile) -> None:
                progress.files_done += 1
                progress.bytes_done += entry["size"]
                if time.monotonic() - progress.saved_at >= PROGRESS_SECONDS:
                    await _save_progress(runtime, claim, progress)

            async with runtime.db.transaction(write=False) as session:
                case = await case_for(session, principal, case_id, Level.READ)
                built = await build.build(
                    runtime,
                    session,
                    principal,
                    case,
                    export_id=claim.job_id,
                    requested_at=created_at,
                    head=head,
                    on_total=total,
                    on_file=on_file,
                )
            await runtime.store.put(built.sha256, built.path)
            await _succeed(runtime, claim, built, progress)
    except LeaseLost:
        log.warning("export %s: its lease was taken over; leaving it to the new holder", claim.job_id)
    except (AppError, AuthError) as exc:
        await _fail(runtime, claim, _error_of(exc))
    except Exception:
        log.exception("export %s failed unexpectedly", claim.job_id)
        await _fail(runtime, claim, {"code": "INTERNAL_ERROR", "message": "The export failed unexpectedly"})
    finally:
        if built is not None:
            built.path.unlink(missing_ok=True)  # gone already once the store took it


async def _succeed(runtime: Runtime, claim: Claim, built: build.Built, progress: Progress) -> None:
    async with runtime.db.transaction(write=True) as session:
        job = await _held(session, claim)
        if job is None or job.status != "running":
            raise LeaseLost
        job.total_files, job.files_done = progress.total_files, progress.files_done + 1  # the manifest
        job.bytes_done = progress.bytes_done
        job.sha256, job.size, job.summary = built.sha256, built.size, built.summary
        _finish(job, "succeeded")
        audit_part = built.summary.get("audit") or {}
        await emit(
            session,
            "export.completed",
            export_completed(
                export_id=job.id,
                case_id=job.case_id,
                requested_by=job.requested_by,
                sha256=built.sha256,
                size_bytes=built.size,
                files=job.files_done,
                documents=built.summary["counts"]["documents"],
                audit_entries=built.summary["counts"]["audit_entries"],
                audit_tree_size=audit_part.get("tree_size"),
            ),
        )


async def _fail(runtime: Runtime, claim: Claim, error: dict[str, Any]) -> None:
    async with runtime.db.transaction(write=True) as session:
        job = await _held(session, claim)
        if job is None or job.status != "running":
            return
        job.error = error
        _finish(job, "failed")
        audit.record(
            session,
            "export.failed",
            resource_type="export",
            resource_id=job.id,
            case_id=job.case_id,
            outcome="failed",
            details={"code": error["code"]},
        )


def _error_of(exc: AppError | AuthError) -> dict[str, Any]:
    if isinstance(exc, AppError):
        return {"code": exc.code, "message": exc.message}
    return {"code": exc.error_code, "message": exc.description}
