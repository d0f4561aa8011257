"""Configuration checks that run before anything starts: each problem ends the command in one or
two lines that name the setting, what is wrong with its value and how to fix it, never a traceback
(docs/operations.md#configuration-errors).

Every command that touches the data dir or the database runs them first (`casefile serve` checks
its port before everything else); `casefile doctor` runs them as its first checks. Each check
returns what it found (for doctor's line) or raises `ConfigurationError`.
"""

from __future__ import annotations

import asyncio
import errno
import getpass
import os
import socket
import sqlite3
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, get_args

from pydantic import SecretStr, ValidationError

from casefile.settings import Settings

if TYPE_CHECKING:
    from sqlalchemy.engine import URL

CONNECT_TIMEOUT_SECONDS = 5.0


class ConfigurationError(Exception):
    """A setting keeps the service from starting; the message says which, why, and the fix."""


def load_settings() -> Settings:
    """The settings, or ConfigurationError naming each invalid variable."""
    try:
        return Settings()
    except ValidationError as exc:
        raise ConfigurationError(describe_invalid(exc)) from None


def describe_invalid(exc: ValidationError) -> str:
    lines = []
    for error in exc.errors(include_url=False):
        name = str(error["loc"][0]) if error["loc"] else ""
        variable = f"CASEFILE_{name.upper()}"
        field = Settings.model_fields.get(name)
        secret = field is not None and SecretStr in (field.annotation, *get_args(field.annotation))
        shown = "(hidden)" if secret else repr(error.get("input"))
        problem = str(error["msg"]).removeprefix("Value error, ")
        default = "" if field is None or field.default is None else f" (default: {field.default})"
        lines.append(f"{variable}={shown}: {problem}. Fix it, or unset it for the default{default}.")
    return "\n".join(lines)


def check_port(host: str, port: int) -> str:
    """The address `casefile serve` will listen on is free (checked before migrations and start-up)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        # As uvicorn binds: SO_REUSEADDR, so a port left in TIME_WAIT by a stopped server is free.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise ConfigurationError(
                    f"port {port} on {host} is already in use (another casefile, or another program: "
                    f"`ss -ltnp 'sport = :{port}'` shows which); stop it, or choose another with --port"
                ) from None
            raise ConfigurationError(
                f"cannot listen on {host}:{port}: {exc.strerror}; check --host"
            ) from None
    return f"{host}:{port} is free"


def check_data_dir(settings: Settings) -> str:
    """The data dir exists (or can be made) and this user can write in it."""
    path = settings.data_dir.resolve()
    user = _user()
    where = f"CASEFILE_DATA_DIR={settings.data_dir}"
    try:
        settings.ensure_data_dir()
        with tempfile.NamedTemporaryFile(dir=path, prefix=".write-check-"):
            pass
    except PermissionError:
        missing = _missing_permission(path)
        raise ConfigurationError(
            f"{where}: the user {user} may not {missing}; give it that permission "
            f"(e.g. `chown -R {user} {path}`), or set CASEFILE_DATA_DIR to a directory it owns"
        ) from None
    except (NotADirectoryError, FileExistsError):
        raise ConfigurationError(
            f"{where}: {path} (or a folder above it) is a file, not a directory; "
            "set CASEFILE_DATA_DIR to a directory"
        ) from None
    except OSError as exc:
        raise ConfigurationError(
            f"{where}: cannot use {path}: {exc.strerror}; set CASEFILE_DATA_DIR to a writable directory"
        ) from None
    return f"{path} is writable by {user}"


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # a uid with no name
        return f"uid {os.getuid()}"


def _missing_permission(path: Path) -> str:
    """Which permission is missing, said for a person: on the directory, or on the nearest one
    above it that exists (where the directory would be created, or which it cannot pass)."""
    if _exists(path):
        return f"write in {path} (it needs read, write and execute permission on it)"
    parent = path.parent
    while not _exists(parent):
        parent = parent.parent
    return (
        f"create {path} (it needs write permission on {parent}, and execute permission on every folder above)"
    )


def _exists(path: Path) -> bool:
    """Whether `path` exists, as this user can tell: a folder it may not pass hides what is in it."""
    try:
        path.stat()
    except FileNotFoundError:
        return False
    except OSError:  # not allowed to look: what is there is not this user's to use
        return path == path.parent
    return True


def check_database(settings: Settings) -> str:
    """The database answers: PostgreSQL accepts the connection, SQLite's file can be opened."""
    from sqlalchemy.engine import make_url

    url = make_url(settings.resolved_database_url)
    if url.get_backend_name() == "sqlite":
        return _check_sqlite(url)
    return asyncio.run(_check_postgresql(url))


def _check_sqlite(url: URL) -> str:
    path = url.database or ""
    if path in ("", ":memory:"):
        return "SQLite in memory"
    where = f"CASEFILE_DATABASE_URL (SQLite file {path})"
    if not Path(path).parent.is_dir():
        raise ConfigurationError(
            f"{where}: the directory {Path(path).parent} does not exist; create it, or fix the path"
        )
    if not Path(path).exists():  # created by the first migration; a check creates nothing
        return f"SQLite at {path} (created at the first start)"
    try:
        # mode=rw: opened as it is, never created (a restore refused later must find no database).
        connection = sqlite3.connect(
            f"{Path(path).as_uri()}?mode=rw", uri=True, timeout=CONNECT_TIMEOUT_SECONDS
        )
        try:
            connection.execute("PRAGMA schema_version").fetchone()
        finally:
            connection.close()
    except sqlite3.Error as exc:
        raise ConfigurationError(
            f"{where}: cannot open it ({exc}); check that it is a SQLite database this user may write"
        ) from None
    return f"SQLite at {path}"


async def _check_postgresql(url: URL) -> str:
    import asyncpg

    host, port = url.host or "localhost", url.port or 5432
    name, user = url.database, url.username or _user()
    dsn = url.set(drivername="postgresql").render_as_string(hide_password=False)
    where = "CASEFILE_DATABASE_URL"
    try:
        connection = await asyncpg.connect(dsn, timeout=CONNECT_TIMEOUT_SECONDS)
    except asyncpg.InvalidCatalogNameError:
        raise ConfigurationError(
            f'{where}: database "{name}" does not exist on {host}:{port}: create it with '
            f"`createdb -h {host} -p {port} -U {user} {name}` (or CREATE DATABASE {name}; in psql)"
        ) from None
    except (asyncpg.InvalidPasswordError, asyncpg.InvalidAuthorizationSpecificationError) as exc:
        raise ConfigurationError(
            f"{where}: PostgreSQL at {host}:{port} refused user {user!r} ({exc}); "
            "check the user and password in the URL, and pg_hba.conf"
        ) from None
    except (OSError, TimeoutError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        raise ConfigurationError(
            f"{where}: cannot connect to {host}:{port} ({reason}): is PostgreSQL running, "
            "and listening on that address?"
        ) from None
    except asyncpg.PostgresError as exc:
        raise ConfigurationError(
            f"{where}: PostgreSQL at {host}:{port} refused the connection: {exc}"
        ) from None
    try:
        version = await connection.fetchval("SHOW server_version")
    finally:
        await connection.close()
    return f'PostgreSQL {version} at {host}:{port}, database "{name}"'


def check_redis(settings: Settings) -> str | None:
    """Redis answers, when it is configured (None: it is not)."""
    if not settings.redis_url:
        return None
    from redis import Redis, RedisError

    client = Redis.from_url(settings.redis_url, socket_connect_timeout=CONNECT_TIMEOUT_SECONDS)
    where = client.connection_pool.connection_kwargs
    address = where.get("path") or f"{where.get('host', 'localhost')}:{where.get('port', 6379)}"
    try:
        client.ping()
    except RedisError as exc:
        raise ConfigurationError(
            f"CASEFILE_REDIS_URL: cannot reach Redis at {address} ({exc}): is Redis running? "
            "(or unset CASEFILE_REDIS_URL to run without it)"
        ) from None
    finally:
        client.close()
    return f"Redis at {address}"


def check_all(settings: Settings) -> None:
    """What every command that uses the data dir and the database needs, in order."""
    check_data_dir(settings)
    check_database(settings)
    check_redis(settings)


def settings_for_command(*, checked: bool) -> Settings:
    """A command's settings; with `checked`, the data dir, database and Redis are checked too. A
    problem ends the command with its one or two lines (click prints `Error: …`, exit status 1)."""
    import click

    try:
        settings = load_settings()
        if checked:
            check_all(settings)
    except ConfigurationError as exc:
        raise click.ClickException(str(exc)) from None
    return settings
