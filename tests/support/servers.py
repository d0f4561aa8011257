"""Test servers on real databases, reached over real HTTP on loopback.

Every test that takes `api` (a fixture of tests/support/plugin.py) runs once per database: SQLite
always, PostgreSQL when it is reachable (CASEFILE_TEST_POSTGRES_URL, default the local server).
With CASEFILE_TEST_REQUIRE_POSTGRES=1 (CI) an unreachable PostgreSQL fails the run instead of
silently testing SQLite alone. Each server gets a fresh database of its own.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import redis
import uvicorn
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.engine import make_url

from casefile.app import create_app
from casefile.db import make_engine
from casefile.migrate import upgrade
from casefile.settings import Settings
from casefile.users.service import ensure_admin

ADMIN_EMAIL = "admin@casefile.test"
ADMIN_PASSWORD = "Admin-Passw0rd-for-tests"
POSTGRES_URL = os.environ.get("CASEFILE_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
REDIS_URL = os.environ.get("CASEFILE_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
REQUIRE_SERVICES = os.environ.get("CASEFILE_TEST_REQUIRE_POSTGRES") == "1"


def _postgres_reachable() -> bool:
    async def probe() -> None:
        conn = await asyncpg.connect(POSTGRES_URL, timeout=3)
        await conn.close()

    try:
        asyncio.run(probe())
    except (OSError, asyncpg.PostgresError, TimeoutError):
        if REQUIRE_SERVICES:
            raise
        return False
    return True


BACKENDS = ["sqlite", *(["postgresql"] if _postgres_reachable() else [])]


def redis_available() -> bool:
    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2).ping()
    except redis.RedisError:
        if REQUIRE_SERVICES:
            raise
        return False
    return True


async def _pg_admin(sql: str) -> None:
    conn = await asyncpg.connect(POSTGRES_URL)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


@contextmanager
def fresh_database(backend: str, data_dir: Path) -> Iterator[str | None]:
    """Yield a database URL for a brand-new database (None: the embedded SQLite default)."""
    if backend == "sqlite":
        yield None
        return
    name = f"casefile_test_{secrets.token_hex(6)}"
    asyncio.run(_pg_admin(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(POSTGRES_URL).set(database=name).render_as_string(hide_password=False)
    finally:
        asyncio.run(_pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Api:
    """A running server and the ways a test talks to it."""

    base: str
    root: str
    settings: Settings
    app: FastAPI
    _admin_token: str | None = field(default=None, repr=False)
    _admin_token_at: float = field(default=0.0, repr=False)

    def client(self, *, token: str | None = None, api_key: str | None = None, **kw: Any) -> httpx.Client:
        headers = dict(kw.pop("headers", {}))
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if api_key:
            headers["X-API-Key"] = api_key
        return httpx.Client(base_url=self.base, headers=headers, timeout=30, **kw)

    def login(self, email: str = ADMIN_EMAIL, password: str = ADMIN_PASSWORD) -> dict[str, Any]:
        with self.client() as c:
            r = c.post("/auth/login", json={"email": email, "password": password})
        assert r.status_code == 200, r.text
        return r.json()["data"]

    @property
    def admin_token(self) -> str:
        """The administrator's access token, signed in again once half its lifetime is gone: the
        shared servers live for the whole run, far longer than a token (15 minutes by default)."""
        age = time.monotonic() - self._admin_token_at
        if self._admin_token is None or age > self.settings.jwt_ttl_seconds / 2:
            self._admin_token = self.login()["token"]
            self._admin_token_at = time.monotonic()
        return self._admin_token

    def admin(self) -> httpx.Client:
        return self.client(token=self.admin_token)

    def make_user(self, role: str, *, password: str = "User-Passw0rd-123") -> tuple[dict[str, Any], str]:
        """Create a user with `role`; return it and an access token for it."""
        email = f"{role}-{secrets.token_hex(4)}@casefile.test"
        with self.admin() as c:
            r = c.post(
                "/users", json={"email": email, "name": f"Test {role}", "password": password, "role": role}
            )
        assert r.status_code == 201, r.text
        return r.json()["data"], self.login(email, password)["token"]

    def make_key(self, permissions: list[str], **extra: Any) -> dict[str, Any]:
        body = {"name": "test key", "permissions": permissions, **extra}
        with self.admin() as c:
            r = c.post("/admin/api-keys", json=body)
        assert r.status_code == 201, r.text
        return r.json()["data"]

    def sql(self, statement: str, *, before: tuple[str, ...] = (), **params: Any) -> list[Any]:
        return run_sql(self.settings, statement, before=before, **params)

    def events(self, name: str, **match: Any) -> list[dict[str, Any]]:
        """The data of recorded events called `name` whose data has the given values."""
        import json

        rows = self.sql("SELECT data FROM events WHERE name = :name ORDER BY occurred_at, id", name=name)
        found = [r[0] if isinstance(r[0], dict) else json.loads(r[0]) for r in rows]
        return [d for d in found if all(d.get(k) == v for k, v in match.items())]


def run_sql(settings: Settings, statement: str, *, before: tuple[str, ...] = (), **params: Any) -> list[Any]:
    """Run SQL against the database of `settings` on a connection of the test's own (after the
    `before` statements, in the same transaction)."""

    async def run() -> list[Any]:
        engine = make_engine(settings, pooled=False)
        try:
            async with engine.begin() as conn:
                for setup in before:
                    await conn.execute(text(setup))
                result = await conn.execute(text(statement), params)
                return list(result.all()) if result.returns_rows else []
        finally:
            await engine.dispose()

    return asyncio.run(run())


@contextmanager
def fresh_running_database_url(backend: str, tmp: Path) -> Iterator[Settings]:
    """Settings for a brand-new, empty database of `backend` (not migrated)."""
    data_dir = tmp / f"data-{secrets.token_hex(4)}"
    with fresh_database(backend, data_dir) as url:
        yield Settings(_env_file=None, data_dir=data_dir, database_url=url)


def make_settings(data_dir: Path, database_url: str | None, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "admin_email": ADMIN_EMAIL,
        "admin_password": ADMIN_PASSWORD,
        "webhook_allow_private_urls": True,  # test receivers listen on loopback
        "webhook_timeout_seconds": 3,
        # Tests make many calls as one administrator; the limits themselves are tested with small ones.
        "rate_limit_user": "100000/hour",
        "rate_limit_api_key": "100000/hour",
        "rate_limit_admin": "100000/hour",
        "rate_limit_login": "100000/minute",
        # Race tests send 40 requests at once on a busy machine: load shedding (tested with small
        # limits in tests/system/test_load_shedding.py) must not answer them 503.
        "max_queued_requests": 1000,
        "max_queue_wait_seconds": 120,
        # Documents are processed only where a test is about processing (tests/ai/).
        "ai_enabled": False,
        # Few connections per server: a run keeps several servers per database and test process
        # alive at once, and PostgreSQL's 100 connections ran out (TooManyConnectionsError).
        "db_pool_size": 4,
        # Every signed head is an event, so a test sees the head that covers what it just did.
        "audit_head_event_seconds": 0,
        **overrides,
    }
    return Settings(_env_file=None, data_dir=data_dir, database_url=database_url, **values)


def shared_settings(database: tuple[Path, str | None]) -> Settings:
    """Settings for several servers on the test's database that share state in Redis (a key prefix
    of their own), their background worker off: what processes behind one load balancer share."""
    data_dir, url = database
    return make_settings(
        data_dir,
        url,
        redis_url=REDIS_URL,
        redis_key_prefix=f"test-{secrets.token_hex(6)}",
        worker_enabled=False,
    )


@contextmanager
def serving(settings: Settings, app_hook: Any = None) -> Iterator[Api]:
    """Serve `settings`' database (migrated, administrator created) in this process on loopback."""
    upgrade(settings)

    async def bootstrap() -> None:
        from casefile.db import Database

        db = Database(settings)
        async with db.transaction() as session:
            await ensure_admin(session, email=ADMIN_EMAIL, password=ADMIN_PASSWORD)
        await db.dispose()

    asyncio.run(bootstrap())
    app = create_app(settings)
    if app_hook is not None:
        app_hook(app)
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("test server did not start")
        time.sleep(0.02)
    root = f"http://127.0.0.1:{port}"
    try:
        yield Api(base=root + "/api/v1", root=root, settings=settings, app=app)
    finally:
        server.should_exit = True
        thread.join(timeout=30)


@contextmanager
def running_server(backend: str, tmp: Path, app_hook: Any = None, **overrides: Any) -> Iterator[Api]:
    """A server on a fresh database of `backend`."""
    data_dir = tmp / f"data-{secrets.token_hex(4)}"
    with (
        fresh_database(backend, data_dir) as url,
        serving(make_settings(data_dir, url, **overrides), app_hook) as api,
    ):
        yield api
