"""A configuration mistake ends the command, before anything starts, in one or two lines naming the
variable, the problem and the fix; never a traceback (docs/operations.md#configuration-errors)."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.support.servers import BACKENDS, POSTGRES_URL, free_port

pytestmark = pytest.mark.slow  # each test runs `casefile` as a child process

CASEFILE = str(Path(sys.executable).with_name("casefile"))


def _run(
    args: list[str], tmp_path: Path, *, user: str | None = None, **variables: str
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASEFILE_")}
    env.setdefault("CASEFILE_DATA_DIR", str(tmp_path / "data"))
    env.update({f"CASEFILE_{k.upper()}": v for k, v in variables.items()})
    command = [CASEFILE, *args]
    if user is not None:  # as another user, who lacks the permission (root has them all)
        ids = pwd.getpwnam(user)
        command = ["setpriv", f"--reuid={ids.pw_uid}", f"--regid={ids.pw_gid}", "--clear-groups", *command]
    return subprocess.run(
        command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
    )


def refused(done: subprocess.CompletedProcess[str], *fragments: str) -> str:
    """The command failed with one or two lines that say all of `fragments`, and no traceback."""
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert 1 <= len(lines) <= 2, done.stderr
    for fragment in fragments:
        assert fragment in done.stderr, done.stderr
    return done.stderr


def test_not_a_database_url(tmp_path: Path) -> None:
    refused(
        _run(["migrate"], tmp_path, database_url="notaurl"),
        "CASEFILE_DATABASE_URL='notaurl': not a database URL",
        "postgresql://",
        "sqlite:///",
    )


def test_an_unsupported_database(tmp_path: Path) -> None:
    refused(
        _run(["migrate"], tmp_path, database_url="mysql://casefile@db.example/casefile"),
        "CASEFILE_DATABASE_URL",
        "unsupported database 'mysql'",
        "Casefile supports PostgreSQL",
    )


@pytest.mark.skipif("postgresql" not in BACKENDS, reason="PostgreSQL is not reachable")
def test_a_postgresql_database_that_does_not_exist(tmp_path: Path) -> None:
    from sqlalchemy.engine import make_url

    url = make_url(POSTGRES_URL).set(database="casefile_no_such_database")
    done = _run(["migrate"], tmp_path, database_url=url.render_as_string(hide_password=False))
    refused(done, "CASEFILE_DATABASE_URL", 'database "casefile_no_such_database" does not exist', "createdb")


def test_postgresql_not_running(tmp_path: Path) -> None:
    port = free_port()  # nothing listens there
    refused(
        _run(["migrate"], tmp_path, database_url=f"postgresql://casefile@127.0.0.1:{port}/casefile"),
        "CASEFILE_DATABASE_URL",
        f"cannot connect to 127.0.0.1:{port}",
        "is PostgreSQL running",
    )


def test_a_data_dir_its_user_may_not_write() -> None:
    with tempfile.TemporaryDirectory() as where:  # outside pytest's tmp (private to its user)
        base = Path(where)
        base.chmod(0o755)
        locked = base / "locked"
        locked.mkdir()
        locked.chmod(0o755)  # whatever this process's umask (servers of other tests narrow it)
        data = locked / "data"
        if os.geteuid() == 0:  # root may write anywhere: run as nobody, who may not write in `locked`
            if shutil.which("setpriv") is None:
                pytest.fail("running as root needs setpriv (util-linux) to test as another user")
            done = _run(["migrate"], base, user="nobody", data_dir=str(data))
        else:
            locked.chmod(0o555)
            done = _run(["migrate"], base, data_dir=str(data))
        refused(done, f"CASEFILE_DATA_DIR={data}", f"may not create {data}", f"write permission on {locked}")
        assert "Traceback" not in done.stderr


def test_a_data_dir_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    refused(
        _run(["migrate"], tmp_path, data_dir=str(tmp_path / "afile" / "data")),
        "CASEFILE_DATA_DIR=",
        "is a file, not a directory",
    )


def test_a_value_of_the_wrong_type(tmp_path: Path) -> None:
    refused(
        _run(["migrate"], tmp_path, jwt_ttl_seconds="fifteen minutes"),
        "CASEFILE_JWT_TTL_SECONDS='fifteen minutes'",
        "valid integer",
        "(default: 900)",
    )


def test_a_key_too_short_is_not_shown(tmp_path: Path) -> None:
    said = refused(
        _run(["migrate"], tmp_path, jwt_secret="secret"), "CASEFILE_JWT_SECRET=(hidden)", "too short"
    )
    assert "'secret'" not in said


def test_redis_not_answering(tmp_path: Path) -> None:
    port = free_port()
    refused(
        _run(["migrate"], tmp_path, redis_url=f"redis://127.0.0.1:{port}/0"),
        "CASEFILE_REDIS_URL",
        f"cannot reach Redis at 127.0.0.1:{port}",
    )


def test_the_port_in_use_is_said_first(tmp_path: Path) -> None:
    """Before the settings are read or the database migrated: a bad database URL is not reached."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = _run(["serve", "--port", str(port)], tmp_path, database_url="notaurl")
    refused(done, f"port {port} on 127.0.0.1 is already in use", "--port")
    assert not (tmp_path / "data").exists()  # nothing was started or created


@pytest.mark.parametrize("url", ["s3:/casefile", "gs://casefile/content", "s3://Not_A_Bucket/x", "s3://"])
def test_not_an_object_storage_url(tmp_path: Path, url: str) -> None:
    refused(_run(["migrate"], tmp_path, storage_url=url), "CASEFILE_STORAGE_URL", "s3://bucket/prefix")


def test_a_bucket_that_cannot_be_reached_is_what_doctor_reports(tmp_path: Path) -> None:
    port = free_port()  # nothing listens there
    done = _run(
        ["doctor"],
        tmp_path,
        storage_url="s3://casefile/content",
        storage_endpoint=f"http://127.0.0.1:{port}",
        storage_region="us-east-1",
        storage_access_key_id="k",
        storage_secret_access_key="secret-not-shown",
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "cannot write in s3://casefile/content" in done.stdout + done.stderr
    assert "secret-not-shown" not in done.stdout + done.stderr
