"""`casefile doctor`: is this machine ready to run Casefile? One line per check, a non-zero exit
when one fails (docs/operations.md#doctor); and `/readyz`, the subset that is cheap enough to be
polled (`readiness`).

A failure keeps Casefile from working (no database, a schema older than the code, a data dir it
cannot write); a warning works but deserves a look (no OCR, generated keys where several machines
share the database, a clock that drifts).
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from sqlalchemy import text

from casefile.ai_extra import ai_installed, ai_missing_message
from casefile.db import make_engine
from casefile.migrate import SchemaState, schema_state
from casefile.preflight import ConfigurationError, check_data_dir, check_database, check_redis
from casefile.runtime import Runtime
from casefile.settings import Settings

Status = Literal["ok", "warn", "fail"]
log = logging.getLogger("casefile")

CLOCK_WARN_SECONDS = 2.0
CLOCK_FAIL_SECONDS = 30.0  # tokens carry their times: beyond this, machines disagree on expiry
DISK_FAIL_BYTES = 1024**3
DISK_WARN_FRACTION = 0.10


@dataclass(frozen=True)
class Finding:
    name: str
    status: Status
    detail: str

    def line(self) -> str:
        return f"{self.status:<5} {self.name:<9} {self.detail}"


def _run(name: str, check: Callable[[], tuple[Status, str]]) -> Finding:
    try:
        status, detail = check()
    except ConfigurationError as exc:
        return Finding(name, "fail", str(exc))
    return Finding(name, status, detail)


def examine(settings: Settings) -> list[Finding]:
    """Every check, in order (the settings themselves were loaded by the caller)."""
    findings = [Finding("settings", "ok", "every CASEFILE_* variable is valid")]
    findings.append(_run("data dir", lambda: ("ok", check_data_dir(settings))))
    database = _run("database", lambda: _database(settings))
    findings.append(database)
    redis_finding = _run("redis", lambda: _redis(settings))
    findings.append(redis_finding)
    findings.append(_run("content", lambda: _content(settings)))
    findings.append(_run("ocr", _ocr))
    findings.append(_run("ai", _ai))
    findings.append(_run("keys", lambda: _keys(settings)))
    if database.status != "fail":
        findings.append(_run("clock", lambda: _clock(settings)))
    findings.append(_run("disk", lambda: _disk(settings)))
    return findings


def _database(settings: Settings) -> tuple[Status, str]:
    reached = check_database(settings)
    state = asyncio.run(_schema_of(settings))
    return ("ok" if state.current and not state.newer else "warn" if state.newer else "fail"), (
        f"{reached}; {state.describe()}"
    )


async def _schema_of(settings: Settings) -> SchemaState:
    engine = make_engine(settings, pooled=False)
    try:
        async with engine.connect() as connection:
            return await schema_state(connection)
    finally:
        await engine.dispose()


def _redis(settings: Settings) -> tuple[Status, str]:
    found = check_redis(settings)
    if found is None:
        return "ok", "not configured (each process keeps its own rate-limit counters and deny-list)"
    return "ok", found


def _content(settings: Settings) -> tuple[Status, str]:
    s3 = settings.s3_storage
    if s3 is not None:
        from casefile.storage.s3 import S3ContentStore

        try:
            S3ContentStore(s3, settings.upload_temp_dir).check_writable()
        except Exception as exc:  # any failure of the store (network, credentials, bucket) is the finding
            raise ConfigurationError(f"cannot write in {settings.storage_url}: {exc}") from None
        return "ok", f"{settings.storage_url} is writable"
    directory = settings.content_dir
    try:
        directory.mkdir(exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".write-check-") as probe:
            probe.write(b"casefile")
            probe.flush()
    except OSError as exc:
        raise ConfigurationError(f"cannot write in {directory}: {exc.strerror}") from None
    return "ok", f"{directory} is writable"


def _ocr() -> tuple[Status, str]:
    tesseract, pdftoppm = shutil.which("tesseract"), shutil.which("pdftoppm")
    if tesseract and pdftoppm:
        return "ok", f"tesseract ({tesseract}) and pdftoppm ({pdftoppm})"
    missing = " and ".join(
        name for name, path in (("tesseract-ocr", tesseract), ("poppler-utils", pdftoppm)) if not path
    )
    return "warn", f"{missing} not installed: images and scanned pages are skipped, not read"


def _ai() -> tuple[Status, str]:
    if ai_installed():
        return "ok", "local models installed (casefile[ai])"
    return "warn", f"{ai_missing_message()}; AI jobs wait for a worker that has them"


def _keys(settings: Settings) -> tuple[Status, str]:
    notes: list[str] = []
    unset: list[str] = []
    for variable, configured, path in (
        ("CASEFILE_JWT_SECRET", settings.jwt_secret, settings.data_dir / "jwt-secret"),
        ("CASEFILE_SECRET_KEY", settings.secret_key, settings.data_dir / "secret-key"),
    ):
        if configured is not None:
            notes.append(f"{variable} set")
            continue
        unset.append(variable)
        if not path.exists():
            notes.append(f"{path.name} generated at the first start")
            continue
        try:
            if not path.read_text().strip():
                raise ConfigurationError(f"{path} is empty: restore it from a backup")
        except PermissionError:
            raise ConfigurationError(f"{path} is not readable by this user: fix its owner") from None
        notes.append(f"{path.name} in the data dir")
    if unset and not settings.is_sqlite:
        return "warn", (
            "; ".join(notes) + f": with several machines on one database, set {' and '.join(unset)} "
            "to the same value everywhere (docs/deployment.md)"
        )
    return "ok", "; ".join(notes)


def _clock(settings: Settings) -> tuple[Status, str]:
    references: list[tuple[str, float]] = []
    if not settings.is_sqlite:
        references.append(("PostgreSQL", asyncio.run(_database_clock_offset(settings))))
    if settings.redis_url:
        references.append(("Redis", _redis_clock_offset(settings)))
    now = datetime.now(UTC).isoformat(timespec="seconds")
    if not references:
        return "ok", f"{now} (one machine: no other clock to compare with)"
    worst_name, worst = max(references, key=lambda item: abs(item[1]))
    said = ", ".join(f"{name} {offset:+.1f} s" for name, offset in references)
    if abs(worst) > CLOCK_FAIL_SECONDS:
        raise ConfigurationError(
            f"this machine's clock is {abs(worst):.0f} s off {worst_name}'s ({said}): "
            "synchronise it (NTP: chrony or systemd-timesyncd)"
        )
    status: Status = "warn" if abs(worst) > CLOCK_WARN_SECONDS else "ok"
    return status, f"{now}; offsets: {said}"


async def _database_clock_offset(settings: Settings) -> float:
    engine = make_engine(settings, pooled=False)
    try:
        async with engine.connect() as connection:
            before = time.time()
            theirs = float(await connection.scalar(text("SELECT extract(epoch FROM clock_timestamp())")))
            after = time.time()
    finally:
        await engine.dispose()
    return theirs - (before + after) / 2


def _redis_clock_offset(settings: Settings) -> float:
    from redis import Redis

    assert settings.redis_url is not None
    client = Redis.from_url(settings.redis_url, socket_connect_timeout=5)
    try:
        before = time.time()
        seconds, microseconds = client.time()
        after = time.time()
    finally:
        client.close()
    return seconds + microseconds / 1e6 - (before + after) / 2


def _disk(settings: Settings) -> tuple[Status, str]:
    usage = shutil.disk_usage(settings.data_dir)
    free_gib = usage.free / 1024**3
    said = f"{free_gib:.1f} GiB free of {usage.total / 1024**3:.1f} GiB at {settings.data_dir.resolve()}"
    if usage.free < DISK_FAIL_BYTES:
        raise ConfigurationError(f"only {said}: uploads and the database will fail; free some space")
    if usage.free < usage.total * DISK_WARN_FRACTION:
        return "warn", f"{said} (under {DISK_WARN_FRACTION:.0%})"
    return "ok", said


# ---- /readyz: the checks cheap enough to be polled ------------------------------------------


@dataclass
class Readiness:
    """What `/readyz` checks on every call: the database answers, its schema is this release's (or
    newer; remembered once seen, since a schema never goes back), Redis answers when configured, and
    the content store is writable."""

    schema_seen_current: bool = False

    async def problems(self, runtime: Runtime) -> list[str]:
        found: list[str] = []
        try:
            async with runtime.db.transaction(write=False) as session:
                await session.execute(text("SELECT 1"))
                if not self.schema_seen_current:
                    state = await schema_state(session)
                    if state.current:
                        self.schema_seen_current = True
                    else:
                        found.append("the database schema is older than this release: run `casefile migrate`")
        except Exception:
            log.exception("readiness check: the database")
            found.append("the database does not answer")
        if runtime.redis is not None:
            try:
                await runtime.redis.ping()
            except Exception:
                log.exception("readiness check: Redis")
                found.append("Redis does not answer")
        if not os.access(runtime.settings.content_dir, os.W_OK | os.X_OK):
            found.append("the content store is not writable")
        return found
