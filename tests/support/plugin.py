"""The tests' fixtures, loaded by tests/conftest.py.

Servers: `api` (one per database for the whole run), `search_api` (one per module, AI processing
off), `make_server` (more servers with other settings), `database` (an empty database for tests
that start servers or workers themselves). Service-level tests: `db_session`, a session on a
migrated database whose transaction is rolled back after each test.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from argon2 import PasswordHasher
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from casefile.auth import passwords
from casefile.db import make_engine
from casefile.migrate import upgrade
from casefile.settings import Settings
from tests.support.receivers import Receiver, receiver_server
from tests.support.s3 import S3Server, s3_server
from tests.support.servers import BACKENDS, Api, fresh_database, make_settings, running_server

# Argon2id at its production parameters (64 MiB, 3 passes, 4 lanes) takes ~150 ms of both cores of
# this machine per hash or check, and the suite creates and signs in hundreds of users: it was half
# the fast tier's time (94 s, 51 s without). The servers started in the test processes hash with
# Argon2id's cheapest parameters; what they store is still Argon2id (tests/users), checked with
# the parameters written in each hash. Processes the tests start (`casefile serve`, the CLI) hash
# at the production parameters, and tests/system/test_operator_commands.py checks them.
passwords._hasher = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)


@pytest.fixture(scope="session", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="session")
def api(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    """One server per database, shared by the tests (they use unique data)."""
    with running_server(backend, tmp_path_factory.mktemp(backend)) as server:
        yield server


@pytest.fixture(scope="module")
def search_api(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    """A server of the module's own with AI processing off, so that the background pipeline never
    replaces the passages a search test stored (tests.support.indexing) behind its back."""
    with running_server(backend, tmp_path_factory.mktemp(f"search-{backend}"), ai_enabled=False) as server:
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


@pytest.fixture(scope="session")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """An S3-compatible server (moto) on loopback for the run; each user makes its own bucket."""
    with s3_server(tmp_path_factory.mktemp("s3") / "moto.log") as server:
        yield server


# Where content is stored: the data dir (the embedded default) and an S3-compatible bucket. A test
# directory whose tests must pass on both has its `api` take this (tests/documents/conftest.py).
# Module-scoped: a session-scoped parameter beside `backend` makes pytest interleave the backends,
# and the shared servers were started again and again (9 starts of `api` instead of 2).
CONTENT_STORES = ["local", "s3"]


@pytest.fixture(scope="module", params=CONTENT_STORES)
def content_store(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def admin(api: Api) -> Iterator[httpx.Client]:
    with api.admin() as client:
        yield client


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with receiver_server() as r:
        yield r


# --- service-level tests: rules checked on a session, without a server ----------------------------


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    """The event loop of `@pytest.mark.anyio` tests: asyncio (SQLAlchemy's async drivers need it),
    one for the whole run, so that `db_engine` and its connections serve every test."""
    return "asyncio"


@pytest.fixture(scope="session")
def db_settings(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    """A fresh database of `backend` with the schema made by the migrations, for the run."""
    data_dir = tmp_path_factory.mktemp(f"service-{backend}")
    with fresh_database(backend, data_dir) as url:
        settings = make_settings(data_dir, url)
        upgrade(settings)
        yield settings


@pytest.fixture(scope="session")
async def db_engine(db_settings: Settings, anyio_backend: str) -> AsyncIterator[AsyncEngine]:
    engine = make_engine(db_settings)
    yield engine
    await engine.dispose()


@pytest.fixture
async def db_session(db_engine: AsyncEngine) -> AsyncIterator[AsyncSession]:
    """A session in a transaction that is rolled back after the test. What the code under test
    commits or nests becomes a savepoint inside it, so nothing a test writes outlives the test."""
    async with db_engine.connect() as connection:
        transaction = await connection.begin()
        session = AsyncSession(
            bind=connection, join_transaction_mode="create_savepoint", expire_on_commit=False
        )
        try:
            yield session
        finally:
            await session.close()
            await transaction.rollback()


TESTS = Path(__file__).parent.parent
# Tests that must share one worker (`--dist loadgroup`), each group's one after another:
# - the AI tests: each keeps an AI process busy on a core, and several at once would stretch the
#   time limits some of them test;
# - the single sign-on tests: they share one OpenID provider per worker, started once (its install,
#   `npm ci`, is under a file lock besides: tests.support.oidc.install_provider).
SERIAL_GROUPS = {TESTS / "ai": "ai", TESTS / "auth" / "test_oidc.py": "oidc"}


# The fast tier (`pytest -m fast`, README): the rules, checked on the shared server (`api`) or a
# session (`db_session`) on SQLite, in under a minute. A test leaves it when it starts something of
# its own: a fixture below (in its fixture closure, so a fixture built on one counts too), a test
# in a directory below (AI models), or a `@pytest.mark.slow` by hand (a process or receiver started
# in the test's body, a wait on a clock). PostgreSQL, the servers and the processes run in the full
# suite, which CI runs.
STARTS_ITS_OWN = {
    "make_server",  # a server on a fresh database, per test
    "database",  # a fresh database for servers or processes the test starts
    "search_api",  # a server per module, and the embedding model in it
    "receiver",  # webhook deliveries, waited for
    "sso",  # the OpenID provider (Node.js)
    "strict",  # tests/webhooks: a server without loopback targets
    "server",  # tests/webhooks/test_batching.py: a server with its worker off
    "source",  # tests/backup: a server to back up
    "blank",  # tests/system: the CLI on an empty database
    "serve",  # tests/system/test_transport.py: `casefile serve` with TLS
    "slim_python",  # tests/ai: a virtualenv of its own
    "previous_tree",  # tests/system/test_upgrade.py: the previous release
    "checkout",  # tests/operations/test_documentation.py: the README's commands
    "browser",  # tests/web: the system's Chromium, through Playwright
    "s3",  # the S3-compatible server (moto)
}
NOT_FAST_DIRS = [TESTS / "ai"]


def is_fast(item: pytest.Item) -> bool:
    params = getattr(item, "callspec", None)
    on_sqlite = params is None or params.params.get("backend", "sqlite") == "sqlite"
    on_local_files = params is None or params.params.get("content_store", "local") == "local"
    return (
        on_sqlite
        and on_local_files
        and not STARTS_ITS_OWN.intersection(getattr(item, "fixturenames", ()))
        and not any(item.path.is_relative_to(d) for d in NOT_FAST_DIRS)
        and item.get_closest_marker("slow") is None
    )


def is_redundant(item: pytest.Item) -> bool:
    """A documents test with content in a bucket on PostgreSQL: where content is kept does not
    depend on the database (the rows are the same for both stores), so the bucket runs on SQLite
    and the database on the data dir; tests/documents/test_object_storage.py runs both databases
    with a bucket (two servers sharing one), and tests/backup the backup of a bucket on both."""
    params = getattr(item, "callspec", None)
    return (
        params is not None
        and params.params.get("content_store") == "s3"
        and params.params.get("backend") == "postgresql"
    )


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups, and before `-m` selects
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    kept, redundant = [], []
    for item in items:
        (redundant if is_redundant(item) else kept).append(item)
    if redundant:
        config.hook.pytest_deselected(items=redundant)
        items[:] = kept
    for item in items:
        for path, group in SERIAL_GROUPS.items():
            if item.path == path or item.path.is_relative_to(path):
                item.add_marker(pytest.mark.xdist_group(group))
        if is_fast(item):
            item.add_marker(pytest.mark.fast)
