"""`casefile` command line: serve, worker, migrate, doctor, backup, restore, users (cli_users.py),
openapi, audit verify, audit export and audit heads (cli_audit.py), and export verify
(cli_export.py).

Modules are imported where they are used, so that `casefile --help` and `--version` start in a
tenth of a second (bench/startup.py). Every command reads its settings through `_settings`, which
turns a configuration error into one or two lines naming the variable (casefile.preflight)."""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
from typing import TYPE_CHECKING

import click

from casefile import __version__
from casefile.cli_audit import audit
from casefile.cli_export import export
from casefile.cli_users import users

if TYPE_CHECKING:
    from casefile.settings import Settings


def _settings(*, checked: bool = False) -> Settings:
    """The settings; with `checked`, also the data dir, the database and Redis (casefile.preflight).
    A problem ends the command with its one or two lines, never a traceback."""
    from casefile.preflight import settings_for_command

    return settings_for_command(checked=checked)


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


@click.group()
@click.version_option(__version__, "--version", "-V", prog_name="casefile", message="%(prog)s %(version)s")
def main() -> None:
    """Casefile: legal case management."""


main.add_command(users)


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
    from casefile.preflight import ConfigurationError, check_port

    try:
        check_port(host, port)  # first: a port in use is said before anything else is done
    except ConfigurationError as exc:
        raise click.ClickException(str(exc)) from None
    import uvicorn

    from casefile.cli_users import ensure_configured_admin
    from casefile.logs import logging_config
    from casefile.migrate import upgrade

    if no_worker:
        os.environ["CASEFILE_WORKER_ENABLED"] = "false"  # read by every API process's settings
    settings = _settings(checked=True)
    level = log_level or settings.log_level
    _configure_logging(level, settings.log_format)
    upgrade(settings)
    ensure_configured_admin(settings)
    if not _is_loopback(host) and not ssl_certfile and not settings.require_https and not proxy_headers:
        logging.getLogger("casefile").warning(
            "DEVELOPMENT SETUP: serving plain HTTP on %s without CASEFILE_REQUIRE_HTTPS: tokens and "
            "passwords cross the network in clear text; use --ssl-certfile/--ssl-keyfile, or a TLS proxy "
            "with --proxy-headers and CASEFILE_REQUIRE_HTTPS=true",
            host,
        )
    # A log record, not a bare print: with CASEFILE_LOG_FORMAT=json every line of the log is JSON.
    logging.getLogger("casefile").info(
        "Casefile %s: open %s (the web app)", __version__, app_address(host, port, tls=bool(ssl_certfile))
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


def app_address(host: str, port: int, *, tls: bool) -> str:
    """Where a browser on this machine finds the web app (all addresses: the loopback one)."""
    every = ("0.0.0.0", "")  # noqa: S104 (recognised, not bound)
    shown = "127.0.0.1" if host in every else "[::1]" if host == "::" else host
    if ":" in shown and not shown.startswith("["):
        shown = f"[{shown}]"
    return f"{'https' if tls else 'http'}://{shown}:{port}/app"


@main.command()
def worker() -> None:
    """Deliver webhooks, run AI jobs and sequence the audit log (alone, beside `casefile serve
    --no-worker`); stops on SIGTERM or Ctrl-C."""
    from casefile.migrate import upgrade

    settings = _settings(checked=True)
    _configure_logging(settings.log_level, settings.log_format)
    upgrade(settings)
    if sys.platform == "win32":  # uvloop is not available there
        import asyncio

        asyncio.run(_run_worker(settings))
    else:
        import uvloop

        # As `casefile serve` runs on uvloop (uvicorn's default when installed): its socket
        # writes and callbacks are in C, where asyncio's were 29 % of the worker's profile
        # (docs/research/bench-notes-2026-11.md, `webhook_workers.py`).
        uvloop.run(_run_worker(settings))


async def _run_worker(settings: Settings) -> None:
    import asyncio

    from casefile.background import run_background_workers
    from casefile.startup import settle_garbage_collector, start_runtime

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    runtime = start_runtime(settings)
    settle_garbage_collector()
    logging.getLogger("casefile").info("delivery, AI and audit workers started")
    try:
        await run_background_workers(runtime, stop)
    finally:
        await runtime.close()


@main.command()
def migrate() -> None:
    """Bring the database schema up to date."""
    from casefile.migrate import upgrade

    settings = _settings(checked=True)
    _configure_logging(settings.log_level, settings.log_format)
    newer = upgrade(settings)
    if newer is not None:
        click.echo(f"the database schema (revision {newer}) is newer than this release: nothing to do")
    else:
        click.echo("database is up to date")


@main.command()
def doctor() -> None:
    """Check this machine's set-up, one line each: settings, data dir, database (reachable,
    migrated), Redis, content storage, OCR, AI models, signing keys, clock, disk. Exits 1 if a
    check fails (a warning does not)."""
    from casefile.doctor import examine

    findings = examine(_settings())
    for finding in findings:
        click.echo(finding.line())
    failed = [finding.name for finding in findings if finding.status == "fail"]
    if failed:
        click.echo(f"{len(failed)} failed: {', '.join(failed)}", err=True)
        sys.exit(1)


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

    settings = _settings(checked=True)
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
    import asyncio

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

    settings = _settings(checked=True)
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


main.add_command(audit)
main.add_command(export)
