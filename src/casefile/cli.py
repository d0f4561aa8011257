"""`casefile` command line: serve, worker, migrate, backup, restore, users create-admin, openapi,
audit verify and audit export."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sys
from collections.abc import Callable

import click
from pydantic import ValidationError

from casefile.settings import Settings


def _settings() -> Settings:
    try:
        return Settings()
    except ValidationError as exc:
        raise click.ClickException(f"invalid settings:\n{exc}") from exc


def _configure_logging(level: str, log_format: str = "text") -> None:
    from casefile.logs import configure

    configure(level, log_format)


def _is_loopback(host: str) -> bool:
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def _create_admin(settings: Settings, email: str, password: str) -> bool:
    from casefile.db import Database
    from casefile.users.service import ensure_admin

    db = Database(settings)
    try:
        async with db.transaction() as session:
            return await ensure_admin(session, email=email, password=password)
    finally:
        await db.dispose()


@click.group()
def main() -> None:
    """Casefile: legal case management."""


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--workers", default=1, show_default=True, type=int, help="API processes")
@click.option("--log-level", default=None, help="Overrides CASEFILE_LOG_LEVEL")
@click.option(
    "--no-worker", is_flag=True, help="Do not deliver webhooks in this process (run `casefile worker`)"
)
@click.option(
    "--ssl-certfile", type=click.Path(exists=True, dir_okay=False), help="Serve HTTPS: certificate (PEM)"
)
@click.option(
    "--ssl-keyfile", type=click.Path(exists=True, dir_okay=False), help="Serve HTTPS: private key (PEM)"
)
@click.option(
    "--proxy-headers",
    is_flag=True,
    help="Behind a reverse proxy: trust X-Forwarded-Proto and X-Forwarded-For from --forwarded-allow-ips",
)
@click.option(
    "--forwarded-allow-ips",
    default="127.0.0.1",
    show_default=True,
    help="Comma-separated proxy addresses whose forwarded headers are trusted (with --proxy-headers)",
)
def serve(  # click passes options by name
    *,
    host: str,
    port: int,
    workers: int,
    log_level: str | None,
    no_worker: bool,
    ssl_certfile: str | None,
    ssl_keyfile: str | None,
    proxy_headers: bool,
    forwarded_allow_ips: str,
) -> None:
    """Migrate the database, create the configured administrator, and serve the API (with the
    webhook delivery worker, unless --no-worker)."""
    if bool(ssl_certfile) != bool(ssl_keyfile):
        raise click.UsageError("--ssl-certfile and --ssl-keyfile go together")
    import uvicorn

    from casefile.logs import logging_config
    from casefile.migrate import upgrade

    if no_worker:
        os.environ["CASEFILE_WORKER_ENABLED"] = "false"  # read by every API process's settings
    settings = _settings()
    level = log_level or settings.log_level
    _configure_logging(level, settings.log_format)
    upgrade(settings)
    if settings.admin_email and settings.admin_password:
        try:
            asyncio.run(
                _create_admin(settings, settings.admin_email, settings.admin_password.get_secret_value())
            )
        except ValidationError as exc:
            raise click.ClickException(f"CASEFILE_ADMIN_EMAIL / CASEFILE_ADMIN_PASSWORD: {exc}") from exc
    if not _is_loopback(host) and not ssl_certfile and not settings.require_https and not proxy_headers:
        logging.getLogger("casefile").warning(
            "DEVELOPMENT SETUP: serving plain HTTP on %s without CASEFILE_REQUIRE_HTTPS: tokens and "
            "passwords cross the network in clear text; use --ssl-certfile/--ssl-keyfile, or a TLS proxy "
            "with --proxy-headers and CASEFILE_REQUIRE_HTTPS=true",
            host,
        )
    uvicorn.run(
        "casefile.app:create_app",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level=level.lower(),
        # Our logging in every worker process; the request line is ours (casefile.metrics), so
        # uvicorn's access line is off.
        log_config=logging_config(level, settings.log_format),
        access_log=False,
        server_header=False,
        ssl_certfile=ssl_certfile,
        ssl_keyfile=ssl_keyfile,
        # Off unless asked for: a forwarded scheme or address is only true when a proxy set it.
        proxy_headers=proxy_headers,
        forwarded_allow_ips=forwarded_allow_ips,
    )


@main.command()
def worker() -> None:
    """Deliver webhooks and run AI jobs (alone, beside `casefile serve --no-worker`); stops on SIGTERM
    or Ctrl-C."""
    from casefile.migrate import upgrade

    settings = _settings()
    _configure_logging(settings.log_level, settings.log_format)
    upgrade(settings)
    if sys.platform == "win32":  # uvloop is not available there
        asyncio.run(_run_worker(settings))
    else:
        import uvloop

        # As `casefile serve` runs on uvloop (uvicorn's default when installed): its socket
        # writes and callbacks are in C, where asyncio's were 29 % of the worker's profile
        # (bench/README.md, `webhook_workers.py`).
        uvloop.run(_run_worker(settings))


async def _run_worker(settings: Settings) -> None:
    from casefile.background import run_background_workers
    from casefile.startup import settle_garbage_collector, start_runtime

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    runtime = start_runtime(settings)
    settle_garbage_collector()
    logging.getLogger("casefile").info("delivery and AI workers started")
    try:
        await run_background_workers(runtime, stop)
    finally:
        await runtime.close()


@main.command()
def migrate() -> None:
    """Bring the database schema up to date."""
    from casefile.migrate import upgrade

    settings = _settings()
    _configure_logging(settings.log_level, settings.log_format)
    upgrade(settings)
    click.echo("database is up to date")


@main.group()
def users() -> None:
    """Manage users."""


@users.command("create-admin")
@click.option("--email", required=True)
@click.option("--password", prompt=True, hide_input=True, confirmation_prompt=True)
def create_admin(email: str, password: str) -> None:
    """Create an administrator (the schema is migrated first)."""
    from casefile.migrate import upgrade

    settings = _settings()
    upgrade(settings)
    try:
        made = asyncio.run(_create_admin(settings, email, password))
    except ValidationError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"created administrator {email}" if made else f"a user with email {email} already exists")


@main.command()
def openapi() -> None:
    """Print the OpenAPI document."""
    from casefile.app import create_app

    click.echo(json.dumps(create_app(_settings()).openapi(), indent=2))


@main.command()
@click.option(
    "--output",
    required=True,
    type=click.Path(dir_okay=False),
    help="Archive to write: .tar, or .tar.gz/.tgz to compress. It holds the keys: keep it private.",
)
@click.option("--force", is_flag=True, help="Overwrite the file if it exists")
def backup(output: str, force: bool) -> None:
    """Write a consistent backup (database, document content, keys) while the service runs, and
    emit `system.backup_completed`. Progress goes to stderr, the summary line to stdout."""
    from pathlib import Path

    from casefile.backup.archive import BackupError
    from casefile.backup.create import backup as write_backup
    from casefile.backup.create import record_backup

    settings = _settings()
    target = Path(output)
    if target.exists() and not force:
        raise click.ClickException(f"{target} exists (use --force to overwrite it)")
    try:
        result = write_backup(settings, target, lambda line: click.echo(line, err=True))
    except (BackupError, OSError) as exc:  # OSError: e.g. no space left, permission denied
        raise click.ClickException(str(exc)) from exc
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    counts = result.snapshot.counts
    click.echo(
        f"backup {result.path} size={result.size} sha256={result.sha256} "
        f"cases={counts['cases']} documents={counts['documents']} webhooks={counts['webhooks']}"
    )
    try:
        asyncio.run(record_backup(settings, result))
    except Exception as exc:
        raise click.ClickException(
            f"the backup is complete, but system.backup_completed could not be recorded: {exc}"
        ) from exc


@main.command()
@click.option(
    "--input",
    "input_",
    required=True,
    type=click.Path(dir_okay=False, exists=True),
    help="An archive written by `casefile backup`",
)
@click.option("--force", is_flag=True, help="Replace a database and data dir that already hold data")
def restore(input_: str, force: bool) -> None:
    """Restore a backup into the configured data dir and database (stop the service first), then
    migrate it to the current schema. The archive is verified completely before anything changes."""
    from pathlib import Path

    from casefile.backup.archive import BackupError
    from casefile.backup.restore import restore as run_restore

    settings = _settings()
    try:
        result = run_restore(
            settings, Path(input_), force=force, report=lambda line: click.echo(line, err=True)
        )
    except (BackupError, OSError) as exc:
        raise click.ClickException(str(exc)) from exc
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    manifest, counts = result.manifest, result.manifest["counts"]
    click.echo(
        f"restored backup of {manifest['created_at']} into {settings.data_dir}: "
        f"cases={counts['cases']} documents={counts['documents']} webhooks={counts['webhooks']}"
    )


@main.group()
def audit() -> None:
    """Check and export the audit trail."""


async def _verify_audit(settings: Settings) -> tuple[int, str | None]:
    from casefile.audit.service import verify
    from casefile.db import Database

    db = Database(settings)
    try:
        async with db.transaction(write=False) as session:
            result = await verify(session)
    finally:
        await db.dispose()
    return result.checked, result.broken.describe() if result.broken else None


@audit.command("verify")
def audit_verify() -> None:
    """Check the hash chain from the first entry to the newest. Exits 1 and names the first
    broken entry if any entry was edited, deleted or reordered."""
    checked, broken = asyncio.run(_verify_audit(_settings()))
    if broken is not None:
        click.echo(f"audit trail broken at {broken} ({checked} entries before it are intact)", err=True)
        sys.exit(1)
    click.echo(f"audit trail intact: {checked} entries")


@audit.command("export")
@click.option("--output", required=True, type=click.Path(dir_okay=False), help="File to write")
@click.option(
    "--format",
    "export_format",
    type=click.Choice(["jsonl", "csv"]),
    default="jsonl",
    show_default=True,
    help="JSON Lines (each entry as the API shows it) or CSV",
)
@click.option("--force", is_flag=True, help="Overwrite the file if it exists")
def audit_export(output: str, export_format: str, force: bool) -> None:
    """Export the whole trail, oldest first, with a progress bar (on stderr). The export is
    recorded in the trail (`audit.exported`)."""
    from contextlib import ExitStack
    from pathlib import Path

    from casefile.audit.export import export
    from casefile.db import Database

    target = Path(output)
    if target.exists() and not force:
        raise click.ClickException(f"{target} exists (use --force to overwrite it)")
    settings = _settings()

    async def run(bars: ExitStack) -> int:
        advance: list[Callable[[int], None]] = []

        def start(total: int) -> None:  # the bar is made once the number of entries is known
            bar = bars.enter_context(click.progressbar(length=total, label="exporting", file=sys.stderr))
            advance.append(bar.update)

        db = Database(settings)
        try:
            return await export(
                db,
                target,
                "csv" if export_format == "csv" else "jsonl",
                on_start=start,
                on_entry=lambda: advance[0](1),
            )
        finally:
            await db.dispose()

    with ExitStack() as bars:
        written = asyncio.run(run(bars))
    click.echo(f"exported {written} entries to {target}")
