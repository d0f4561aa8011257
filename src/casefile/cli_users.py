"""`casefile users`: create an administrator, reset a password, list the users; and the
administrator `casefile serve` creates from its settings (or the sentence that says how to make one).

The command line is how an operator gets in when nobody can (no administrator yet, a forgotten
password): it works on the database directly, as the service's own user."""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, TypeVar

import click

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from sqlalchemy.ext.asyncio import AsyncSession

    from casefile.runtime import Runtime
    from casefile.settings import Settings

T = TypeVar("T")
log = logging.getLogger("casefile")


def _settings() -> Settings:
    from casefile.preflight import settings_for_command

    return settings_for_command(checked=True)


def _migrated_settings() -> Settings:
    from casefile.migrate import upgrade

    settings = _settings()
    upgrade(settings)
    return settings


def _in_transaction(settings: Settings, work: Callable[[AsyncSession, Runtime], Awaitable[T]]) -> T:
    """Run `work` in one write transaction, with a runtime (ending a user's sessions needs its
    deny-list and caller cache)."""
    import asyncio

    from casefile.startup import start_runtime

    async def run() -> T:
        runtime = start_runtime(settings)
        try:
            async with runtime.db.transaction(write=True) as session:
                return await work(session, runtime)
        finally:
            await runtime.close()

    return asyncio.run(run())


def _valid(action: Callable[[], T]) -> T:
    """A password or email the API would refuse ends the command with the API's reason."""
    from pydantic import ValidationError

    try:
        return action()
    except ValidationError as exc:
        reasons = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise click.ClickException(reasons) from None


def _new_password(password: str | None) -> str:
    """The password given, else read from standard input when it is not a terminal (one line, for
    scripts), else asked for twice without echo."""
    if password is not None:
        return password
    if not sys.stdin.isatty():
        line = sys.stdin.readline().rstrip("\r\n")
        if not line:
            raise click.ClickException("no password on standard input")
        return line
    entered: str = click.prompt("Password", hide_input=True, confirmation_prompt=True)
    return entered


@click.group()
def users() -> None:
    """Manage users: create an administrator, reset a password, list them."""


@users.command("create-admin")
@click.option("--email", required=True)
@click.option("--password", default=None, help="Asked for (or read from standard input) when not given")
def create_admin(email: str, password: str | None) -> None:
    """Create an administrator (the schema is migrated first). Fails if the email is taken."""
    from casefile.users.schemas import UserCreate
    from casefile.users.service import create_user

    settings = _migrated_settings()
    chosen = _new_password(password)
    body = _valid(lambda: UserCreate(email=email, name="Administrator", password=chosen, role="admin"))

    async def create(session: AsyncSession, _: Runtime) -> bool:
        from casefile.auth.repository import find_user_by_email

        if await find_user_by_email(session, body.email) is not None:
            return False
        await create_user(session, email=body.email, name=body.name, password=body.password, role="admin")
        return True

    if not _in_transaction(settings, create):
        raise click.ClickException(
            f"a user with email {body.email} already exists; to set a new password: "
            f"casefile users reset-password {body.email}"
        )
    click.echo(f"created administrator {body.email}")


@users.command("reset-password")
@click.argument("email")
def reset_password(email: str) -> None:
    """Set a new password for EMAIL: asked for twice, or read from standard input (one line). The
    user's sessions end."""
    from casefile.auth.repository import find_user_by_email
    from casefile.users.service import reset_password as reset

    settings = _migrated_settings()
    password = _new_password(None)

    async def change(session: AsyncSession, runtime: Runtime) -> bool:
        user = await find_user_by_email(session, email)
        if user is None:
            return False
        await reset(session, runtime, user, password)
        return True

    if not _valid(lambda: _in_transaction(settings, change)):
        raise click.ClickException(f"no user has the email {email} (`casefile users list` shows them)")
    click.echo(f"password changed for {email}; their sessions have ended")


@users.command("list")
def list_users() -> None:
    """Every user: email, role, whether active, last sign-in."""
    from casefile.users.service import all_users

    settings = _migrated_settings()

    async def read(session: AsyncSession, _: Runtime) -> list[tuple[str, str, str, str]]:
        return [
            (
                user.email,
                user.role,
                "active" if user.active else "disabled",
                user.last_login_at.isoformat(timespec="seconds") if user.last_login_at else "never",
            )
            for user in await all_users(session)
        ]

    rows = _in_transaction(settings, read)
    if not rows:
        click.echo("no users yet: casefile users create-admin --email you@example.com")
        return
    widths = [
        max(len(row[i]) for row in [*rows, ("email", "role", "status", "last sign-in")]) for i in range(4)
    ]
    for row in [("email", "role", "status", "last sign-in"), *rows]:
        click.echo("  ".join(value.ljust(width) for value, width in zip(row, widths, strict=True)).rstrip())


def ensure_configured_admin(settings: Settings) -> None:
    """`casefile serve`: create the administrator of CASEFILE_ADMIN_EMAIL/PASSWORD if no user has
    that email; then, if still no administrator exists, say in the log how to create one."""
    from casefile.users.service import NO_ADMINISTRATOR, administrator_exists, ensure_admin

    async def ensure(session: AsyncSession, _: Runtime) -> bool:
        if settings.admin_email and settings.admin_password:
            await ensure_admin(
                session, email=settings.admin_email, password=settings.admin_password.get_secret_value()
            )
        return await administrator_exists(session)

    from pydantic import ValidationError

    try:
        exists = _in_transaction(settings, ensure)
    except ValidationError as exc:
        reasons = "; ".join(f"{e['loc'][0]}: {e['msg']}" for e in exc.errors())
        raise click.ClickException(f"CASEFILE_ADMIN_EMAIL / CASEFILE_ADMIN_PASSWORD: {reasons}") from None
    if not exists:
        log.warning(NO_ADMINISTRATOR)
