"""Test servers on real databases, reached over real HTTP on loopback.

Every test that takes `api` runs once per database: SQLite always, PostgreSQL when it is
reachable (CASEFILE_TEST_POSTGRES_URL, default the local server). With
CASEFILE_TEST_REQUIRE_POSTGRES=1 (CI) an unreachable PostgreSQL fails the run instead of
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
import pytest
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
        if self._admin_token is None:
            self._admin_token = self.login()["token"]
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
        engine = make_engine(settings, immediate=True, pooled=False)
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
        # Documents are processed only where a test is about processing (tests/test_ai_*.py).
        "ai_enabled": False,
        **overrides,
    }
    return Settings(_env_file=None, data_dir=data_dir, database_url=database_url, **values)


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


@pytest.fixture(scope="session", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="session")
def api(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    """One server per database, shared by the tests (they use unique data)."""
    with running_server(backend, tmp_path_factory.mktemp(backend)) as server:
        yield server


@pytest.fixture
def database(backend: str, tmp_path: Path) -> Iterator[tuple[Path, str | None]]:
    """A data dir and a fresh database of `backend` (None: SQLite in the data dir), for tests
    that run several servers or workers on one database."""
    data_dir = tmp_path / "data"
    with fresh_database(backend, data_dir) as url:
        yield data_dir, url


@pytest.fixture
def make_server(backend: str, tmp_path: Path) -> Iterator[Any]:
    """Start extra servers with other settings, each on a fresh database of the same backend."""
    stack: list[Any] = []

    def start(app_hook: Any = None, **overrides: Any) -> Api:
        cm = running_server(backend, tmp_path, app_hook, **overrides)
        stack.append(cm)
        return cm.__enter__()

    yield start
    for cm in reversed(stack):
        cm.__exit__(None, None, None)


@pytest.fixture
def admin(api: Api) -> Iterator[httpx.Client]:
    with api.admin() as client:
        yield client


def unique(prefix: str = "x") -> str:
    return f"{prefix}{secrets.token_hex(5)}"


def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, f"{response.status_code}: {response.text}"
    body = response.json()
    assert body["success"] is True
    assert response.headers["x-request-id"] == body["meta"]["request_id"]
    return body["data"]


def api_error(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, f"{response.status_code}: {response.text}"
    body = response.json()
    assert body["success"] is False and body["error"]["code"] == code, body
    assert body["meta"]["request_id"] == response.headers["x-request-id"]
    return dict(body["error"])


def auth_error(response: httpx.Response, status: int, error_code: str) -> dict[str, Any]:
    assert response.status_code == status, f"{response.status_code}: {response.text}"
    body = response.json()
    assert body["error_code"] == error_code, body
    assert body["error"] == ("unauthorized" if status == 401 else "forbidden")
    assert body["request_id"] == response.headers["x-request-id"]
    return dict(body)


def details(error: dict[str, Any]) -> dict[str, str]:
    return {d["field"]: d["message"] for d in error.get("details") or []}


def new_case(client: httpx.Client, **fields: Any) -> dict[str, Any]:
    body = {
        "title": fields.pop("title", unique("Case ")),
        "case_number": fields.pop("case_number", unique("CN-")),
        "case_type": "civil",
        "jurisdiction": "California",
        "client_name": "Acme Corp",
        "description": "Contract dispute over delivery terms",
        "status": "active",
        "priority": "high",
        **fields,
    }
    return dict(ok(client.post("/cases", json=body), 201))
