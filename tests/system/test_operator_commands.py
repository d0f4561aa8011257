"""The operator's commands: --version, users (create-admin, reset-password, list), doctor; the
first run without an administrator; /readyz on the schema."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from casefile import __version__
from casefile.migrate import head_revision, upgrade
from casefile.settings import Settings
from tests.support import plain
from tests.support.processes import Process
from tests.support.servers import REDIS_URL, fresh_running_database_url, redis_available, serving

CASEFILE = str(Path(sys.executable).with_name("casefile"))
NO_ADMINISTRATOR = "No administrator exists yet, so nobody can sign in: create one with"


@pytest.fixture
def blank(backend: str, tmp_path: Path):
    with fresh_running_database_url(backend, tmp_path) as settings:
        yield settings


def cli(
    settings: Settings, *args: str, stdin: str | None = None, **variables: str
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASEFILE_")}
    env["CASEFILE_DATA_DIR"] = str(settings.data_dir)
    if settings.database_url:
        env["CASEFILE_DATABASE_URL"] = settings.database_url
    env.update({f"CASEFILE_{k.upper()}": v for k, v in variables.items()})
    return subprocess.run(
        [CASEFILE, *args], env=env, input=stdin, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.slow  # `casefile` as a child process
def test_version(tmp_path: Path) -> None:
    done = subprocess.run([CASEFILE, "--version"], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == f"casefile {__version__}"


def test_users_create_reset_and_list(blank: Settings) -> None:
    made = cli(blank, "users", "create-admin", "--email", "Boss@Casefile.test", stdin="First-Passw0rd-long\n")
    assert made.returncode == 0 and "created administrator Boss@casefile.test" in made.stdout, made.stderr
    taken = cli(
        blank, "users", "create-admin", "--email", "boss@casefile.test", stdin="Other-Passw0rd-long\n"
    )
    assert taken.returncode == 1 and "already exists" in taken.stderr
    weak = cli(blank, "users", "reset-password", "Boss@casefile.test", stdin="short\n")
    assert weak.returncode == 1 and "password" in weak.stderr and "Traceback" not in weak.stderr
    unknown = cli(blank, "users", "reset-password", "nobody@casefile.test", stdin="Second-Passw0rd-long\n")
    assert unknown.returncode == 1 and "no user has the email nobody@casefile.test" in unknown.stderr

    with serving(blank) as api:  # the server's own test administrator is created beside ours
        # The CLI hashed at the production parameters (the test processes' own servers do not:
        # tests/support/plugin.py), and this server checks such a hash.
        stored = api.sql("SELECT password_hash FROM users WHERE lower(email) = 'boss@casefile.test'")[0][0]
        assert stored.startswith("$argon2id$v=19$m=65536,t=3,p=4$")
        token = api.login("Boss@casefile.test", "First-Passw0rd-long")["token"]
        reset = cli(blank, "users", "reset-password", "Boss@casefile.test", stdin="Second-Passw0rd-long\n")
        assert reset.returncode == 0 and "password changed" in reset.stdout, reset.stderr
        with api.client() as c:
            assert (
                c.post(
                    "/auth/login", json={"email": "Boss@casefile.test", "password": "First-Passw0rd-long"}
                ).status_code
                == 401
            )
        api.login("Boss@casefile.test", "Second-Passw0rd-long")
        with api.client(token=token) as c:  # the session in use before the reset has ended
            assert c.get("/users/me").status_code == 401
        listed = cli(blank, "users", "list")
    assert listed.returncode == 0, listed.stderr
    rows = listed.stdout.splitlines()
    assert rows[0].split() == ["email", "role", "status", "last", "sign-in"]
    assert re.match(r"Boss@casefile\.test +admin +active +\d{4}-\d\d-\d\dT", rows[1])
    assert len(rows) == 3  # and the test server's administrator


def test_first_run_says_how_to_create_an_administrator(blank: Settings, tmp_path: Path) -> None:
    server = Process("serve", blank, tmp_path / "serve.log")
    try:
        assert NO_ADMINISTRATOR in (tmp_path / "serve.log").read_text()
        setup = plain.get(server.base + "/auth/setup").json()["data"]
        assert setup["administrator_exists"] is False and setup["message"].startswith(NO_ADMINISTRATOR)
        assert (
            cli(
                blank, "users", "create-admin", "--email", "a@casefile.test", stdin="Admin-Passw0rd-long\n"
            ).returncode
            == 0
        )
        assert plain.get(server.base + "/auth/setup").json()["data"] == {
            "administrator_exists": True,
            "message": None,
        }
    finally:
        server.stop()


def test_doctor_on_a_sound_set_up(blank: Settings) -> None:
    upgrade(blank)
    variables = {"redis_url": REDIS_URL} if redis_available() else {}
    done = cli(blank, "doctor", **variables)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = {line.split()[1]: line for line in done.stdout.splitlines()}
    assert list(lines) == [
        "settings",
        "data",
        "database",
        "redis",
        "content",
        "ocr",
        "ai",
        "keys",
        "clock",
        "disk",
    ]
    assert (
        lines["database"].startswith("ok")
        and f"schema at revision {head_revision()}, this release's" in lines["database"]
    )
    assert lines["content"].startswith("ok") and lines["disk"].startswith(("ok", "warn"))
    if variables:
        assert lines["redis"].startswith("ok") and "Redis at" in lines["redis"]
        assert lines["clock"].startswith("ok") and "Redis" in lines["clock"]
    if not blank.is_sqlite:
        assert "PostgreSQL" in lines["clock"]
        # Keys generated into the data dir while machines may share the database: a warning.
        assert (
            lines["keys"].startswith("warn")
            and "CASEFILE_JWT_SECRET and CASEFILE_SECRET_KEY" in lines["keys"]
        )


def test_doctor_fails_on_an_unmigrated_database(blank: Settings) -> None:
    done = cli(blank, "doctor")
    assert done.returncode == 1
    database = next(line for line in done.stdout.splitlines() if line.split()[1] == "database")
    assert database.startswith("fail") and "not migrated" in database and "casefile migrate" in database
    assert "1 failed: database" in done.stderr


@pytest.mark.slow  # `casefile` as a child process
def test_doctor_fails_on_an_unreachable_database(tmp_path: Path) -> None:
    settings = Settings(
        _env_file=None, data_dir=tmp_path / "data", database_url="postgresql://x@127.0.0.1:9/x"
    )
    done = cli(settings, "doctor")
    assert done.returncode == 1 and "fail  database  CASEFILE_DATABASE_URL: cannot connect" in done.stdout
    assert "clock" not in done.stdout  # nothing to compare with


def test_readyz_says_when_the_schema_is_older_than_the_code(make_server) -> None:
    api = make_server()
    current = head_revision()
    api.sql("UPDATE alembic_version SET version_num = '0015'")
    answer = plain.get(api.root + "/readyz")
    assert answer.status_code == 503
    assert answer.json()["error"] == {
        "code": "NOT_READY",
        "message": "Not ready: the database schema is older than this release: run `casefile migrate`",
    }
    api.sql("UPDATE alembic_version SET version_num = :head", head=current)
    assert plain.get(api.root + "/readyz").status_code == 200
    api.sql("UPDATE alembic_version SET version_num = '0015'")
    # Once seen current, the schema is not asked again (it never goes back): the poll stays cheap.
    assert plain.get(api.root + "/readyz").status_code == 200


def test_a_newer_schema_is_left_as_it_is(blank: Settings, tmp_path: Path) -> None:
    upgrade(blank)
    from tests.support.servers import run_sql

    run_sql(blank, "UPDATE alembic_version SET version_num = '9999'")  # as a newer release leaves it
    done = cli(blank, "migrate")
    assert done.returncode == 0 and "newer than this release: nothing to do" in done.stdout, done.stderr
    assert "revision 9999" in done.stderr  # the warning in the log
    server = Process("serve", blank, tmp_path / "serve.log")
    try:
        assert httpx.get(server.root + "/readyz").status_code == 200
    finally:
        server.stop()
    assert run_sql(blank, "SELECT version_num FROM alembic_version") == [("9999",)]
