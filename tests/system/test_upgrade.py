"""Expand-then-contract, proved (docs/upgrading.md): the previous release, checked out beside the
tree at the commit CHANGELOG.md names for it, runs unchanged against a database migrated by this
release, on SQLite and PostgreSQL, as its processes do during a rolling upgrade."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import httpx
import pytest
from packaging.requirements import Requirement

from casefile.migrate import upgrade
from tests.support.servers import free_port, fresh_running_database_url
from tests.support.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
CASEFILE = str(Path(sys.executable).with_name("casefile"))


def previous_release() -> tuple[str, str]:
    """(version, commit) of the newest release heading of CHANGELOG.md that names a commit."""
    found = re.search(
        r"^## (\S+) \(commit ([0-9a-f]{7,40})\)$", (ROOT / "CHANGELOG.md").read_text(), flags=re.M
    )
    assert found, "CHANGELOG.md names no released commit"
    return found[1], found[2]


@pytest.fixture(scope="module")
def previous_tree(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    _, commit = previous_release()
    tree = tmp_path_factory.mktemp("previous") / "casefile"
    added = subprocess.run(
        ["git", "worktree", "add", "--detach", str(tree), commit],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert added.returncode == 0, f"cannot check out the previous release {commit}: {added.stderr}"
    try:
        yield tree
    finally:
        subprocess.run(
            ["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, capture_output=True, check=False
        )


def _pins_differ(tree: Path) -> list[str]:
    """The previous release's pinned dependencies this environment does not have as pinned."""
    project = tomllib.loads((tree / "pyproject.toml").read_text())["project"]
    differ = []
    for line in project["dependencies"]:
        requirement = Requirement(line)
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        try:
            installed = metadata.version(requirement.name)
        except metadata.PackageNotFoundError:
            installed = "none"
        if not requirement.specifier.contains(installed):
            differ.append(f"{requirement} (installed: {installed})")
    return differ


@pytest.fixture(scope="module")
def previous_python(
    previous_tree: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, dict[str, str]]:
    """How to run the previous release: its `src` on PYTHONPATH over this environment when every
    pin of it is installed here as pinned (sound: the same libraries it was released with); else
    installed in a virtualenv of its own (slow: from the registry)."""
    if not _pins_differ(previous_tree):
        return sys.executable, {"PYTHONPATH": str(previous_tree / "src")}
    venv = tmp_path_factory.mktemp("previous-venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(previous_tree)], check=True, timeout=1200)
    return str(venv / "bin" / "python"), {}


SERVE_APP = """
import sys, uvicorn, casefile
from casefile.app import create_app
print("running", casefile.__version__, "from", casefile.__file__, flush=True)
uvicorn.run(create_app(), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""


def test_the_previous_release_runs_on_this_schema(
    backend: str, tmp_path: Path, previous_tree: Path, previous_python: tuple[str, dict[str, str]]
) -> None:
    version, _ = previous_release()
    with fresh_running_database_url(backend, tmp_path) as settings:
        upgrade(settings)  # this release's migrations
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CASEFILE_", "PYTHONPATH"))}
        env["CASEFILE_DATA_DIR"] = str(settings.data_dir)
        if settings.database_url:
            env["CASEFILE_DATABASE_URL"] = settings.database_url
        env["CASEFILE_AI_ENABLED"] = "false"  # no model to load; the workers run
        made = subprocess.run(
            [
                CASEFILE,
                "users",
                "create-admin",
                "--email",
                "old@casefile.test",
                "--password",
                "Old-Release-Passw0rd",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert made.returncode == 0, made.stderr
        # The previous release's app, as its processes run during a rolling upgrade. (Not its
        # `casefile serve`: that migrates first, and 0.1.0 stops on a revision it does not know.)
        python, extra = previous_python
        port = free_port()
        log = tmp_path / "previous.log"
        with log.open("wb") as output:
            process = subprocess.Popen(
                [python, "-c", SERVE_APP, str(port)],
                env={**env, **extra},
                stdout=output,
                stderr=subprocess.STDOUT,
            )
        base = f"http://127.0.0.1:{port}"
        try:

            def up() -> bool:
                assert process.poll() is None, log.read_text()
                try:
                    return httpx.get(base + "/healthz", timeout=1).status_code == 200
                except httpx.HTTPError:
                    return False

            wait_until(up, timeout=120, interval=0.2)
            assert f"running {version} from {previous_tree / 'src'}" in log.read_text()
            with httpx.Client(base_url=base + "/api/v1", timeout=30) as client:
                login = client.post(
                    "/auth/login", json={"email": "old@casefile.test", "password": "Old-Release-Passw0rd"}
                )
                assert login.status_code == 200, login.text + log.read_text()[-3000:]
                client.headers["Authorization"] = f"Bearer {login.json()['data']['token']}"
                case = client.post(
                    "/cases", json={"title": "Upgrade v. Downtime", "client_name": "Acme Corp"}
                )
                assert case.status_code == 201, case.text + log.read_text()[-3000:]
                case_id = case.json()["data"]["id"]
                assert client.patch(f"/cases/{case_id}", json={"status": "active"}).status_code == 200
                listed = client.get("/cases", params={"search": "upgrade"})
                assert [c["id"] for c in listed.json()["data"]] == [case_id]
                upload = client.post(
                    f"/cases/{case_id}/documents",
                    files={"file": ("memo.txt", b"Rolling upgrade.\n", "text/plain")},
                )
                assert upload.status_code == 201, upload.text
                content = client.get(f"/documents/{upload.json()['data']['id']}/content")
                assert content.content == b"Rolling upgrade.\n"
                assert (
                    client.post("/contacts", json={"name": "Old Release", "kind": "person"}).status_code
                    == 201
                )
                assert client.get("/admin/audit").status_code == 200
            assert "Traceback" not in log.read_text()
        finally:
            process.terminate()
            process.wait(timeout=30)
        # This release's worker then places what the previous release chained (its old seq and
        # prev_hash kept as chained_*) into the verifiable log, and the whole log verifies.
        worker_log = tmp_path / "worker.log"
        with worker_log.open("wb") as output:
            worker = subprocess.Popen([CASEFILE, "worker"], env=env, stdout=output, stderr=subprocess.STDOUT)
        try:

            def verified() -> bool:
                assert worker.poll() is None, worker_log.read_text()
                checked = subprocess.run(
                    [CASEFILE, "audit", "verify"],
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=120,
                    check=False,
                )
                assert checked.returncode == 0, checked.stderr + worker_log.read_text()[-3000:]
                intact = re.search(r"intact: (\d+) entries, .* (\d+) entries wait", checked.stdout)
                assert intact, checked.stdout
                # the previous release's writes (login, case, move, upload, contact, ...) all placed
                return int(intact[1]) >= 6 and intact[2] == "0"

            wait_until(verified, timeout=120, interval=1)
        finally:
            worker.terminate()
            worker.wait(timeout=30)
