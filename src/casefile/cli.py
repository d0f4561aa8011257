"""`casefile` command line: serve, migrate, users create-admin, openapi."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sys

import click
from pydantic import ValidationError

from casefile.settings import Settings


def _settings() -> Settings:
    try:
        return Settings()
    except ValidationError as exc:
        raise click.ClickException(f"invalid settings:\n{exc}") from exc


def _configure_logging(level: str) -> None:
    logging.basicConfig(
        level=level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr
    )


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
def serve(host: str, port: int, workers: int, log_level: str | None, no_worker: bool) -> None:
    """Migrate the database, create the configured administrator, and serve the API (with the
    webhook delivery worker, unless --no-worker)."""
    import uvicorn

    from casefile.migrate import upgrade

    if no_worker:
        os.environ["CASEFILE_WORKER_ENABLED"] = "false"  # read by every API process's settings
    settings = _settings()
    level = log_level or settings.log_level
    _configure_logging(level)
    upgrade(settings)
    if settings.admin_email and settings.admin_password:
        try:
            asyncio.run(
                _create_admin(settings, settings.admin_email, settings.admin_password.get_secret_value())
            )
        except ValidationError as exc:
            raise click.ClickException(f"CASEFILE_ADMIN_EMAIL / CASEFILE_ADMIN_PASSWORD: {exc}") from exc
    uvicorn.run(
        "casefile.app:create_app",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level=level.lower(),
        server_header=False,
    )


@main.command()
def worker() -> None:
    """Deliver webhooks (alone, beside `casefile serve --no-worker`); stops on SIGTERM or Ctrl-C."""
    from casefile.migrate import upgrade

    settings = _settings()
    _configure_logging(settings.log_level)
    upgrade(settings)
    asyncio.run(_run_worker(settings))


async def _run_worker(settings: Settings) -> None:
    from casefile.runtime import Runtime
    from casefile.worker.loop import run_worker

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    runtime = Runtime.start(settings)
    logging.getLogger("casefile").info("delivery worker started")
    try:
        await run_worker(runtime, stop)
    finally:
        await runtime.close()


@main.command()
def migrate() -> None:
    """Bring the database schema up to date."""
    from casefile.migrate import upgrade

    settings = _settings()
    _configure_logging(settings.log_level)
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
