"""`pip install casefile` without the `ai` extra: a real virtualenv holding exactly the base
requirements (linked from this environment's installed distributions, so nothing is downloaded)
serves the API, leaves AI jobs queued for a worker that has the models, searches by words and
refuses "ask"; a worker installed with the extra then processes what it left
(docs/decisions/0021-operating-and-upgrading.md)."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import httpx
import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from casefile.ai_extra import AI_MODULES
from tests.support.servers import ADMIN_EMAIL, ADMIN_PASSWORD, free_port
from tests.support.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
CLI = "import sys; from casefile.cli import main; sys.argv[0] = 'casefile'; main()"


def base_distributions() -> set[str]:
    """Casefile's requirements without extras (from pyproject.toml), and theirs, as installed."""
    todo = [
        Requirement(line)
        for line in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    ]
    seen: set[tuple[str, str]] = set()  # (distribution, extra) pairs taken
    while todo:
        requirement = todo.pop()
        name = canonicalize_name(requirement.name)
        for extra in ("", *requirement.extras):  # `sqlalchemy[asyncio]` brings greenlet
            if (name, extra) in seen:
                continue
            seen.add((name, extra))
            for line in metadata.requires(name) or []:
                needed = Requirement(line)
                if needed.marker is None or needed.marker.evaluate({"extra": extra}):
                    todo.append(needed)
    return {name for name, _ in seen}


def make_slim_venv(target: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(target)], check=True)
    site = next((target / "lib").glob("python3.*")) / "site-packages"
    for name in base_distributions():
        distribution = metadata.distribution(name)
        installed = Path(str(distribution.locate_file("")))
        tops = {Path(str(f)).parts[0] for f in distribution.files or [] if not str(f).startswith("..")}
        for top in tops - {"__pycache__"}:
            if (installed / top).exists() and not (site / top).exists():
                (site / top).symlink_to(installed / top)
    (site / "casefile-src.pth").write_text(str(ROOT / "src") + "\n")  # as `pip install -e .`
    return target / "bin" / "python"


@pytest.fixture(scope="module")
def slim_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    python = make_slim_venv(tmp_path_factory.mktemp("slim") / "venv")
    probe = "import importlib.util as u, sys; sys.exit(any(u.find_spec(m) for m in sys.argv[1:]))"
    assert subprocess.run([python, "-c", probe, *AI_MODULES], check=False).returncode == 0, (
        "an AI module is there"
    )
    return str(python)


def _env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CASEFILE_", "PYTHONPATH"))}
    env.update(
        CASEFILE_DATA_DIR=str(data_dir),
        CASEFILE_ADMIN_EMAIL=ADMIN_EMAIL,
        CASEFILE_ADMIN_PASSWORD=ADMIN_PASSWORD,
        CASEFILE_WORKER_POLL_SECONDS="0.2",
    )
    return env


def test_a_slim_api_node_leaves_ai_work_to_a_worker_that_has_the_models(
    slim_python: str, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    port = free_port()
    log = tmp_path / "slim.log"
    with log.open("wb") as output:
        slim = subprocess.Popen(
            [slim_python, "-c", CLI, "serve", "--port", str(port)],
            env=_env(data),
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}/api/v1"
    worker: subprocess.Popen[bytes] | None = None
    try:

        def up() -> bool:
            assert slim.poll() is None, log.read_text()
            try:
                return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(up, timeout=120, interval=0.2)
        said = log.read_text()
        assert (
            "AI jobs are left for another worker: this installation has no local AI models (missing: numpy"
            in said
        )
        assert "install the AI extra: pip install 'casefile[ai]'" in said
        with httpx.Client(base_url=base, timeout=30) as client:
            token = client.post("/auth/login", json={"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD}).json()
            client.headers["Authorization"] = f"Bearer {token['data']['token']}"
            case = client.post("/cases", json={"title": "Slim v. Node"}).json()["data"]
            text = b"The tenant shall pay rent of $1,200 on the first day of each month to Acme Corp.\n"
            uploaded = client.post(
                f"/cases/{case['id']}/documents", files={"file": ("lease.txt", text, "text/plain")}
            )
            assert uploaded.status_code == 201 and uploaded.json()["data"]["processing_status"] == "pending"
            document_id = uploaded.json()["data"]["id"]

            found = client.get("/search", params={"q": "tenant rent"})  # by words: the title and case
            assert found.status_code == 200
            asked = client.post(f"/cases/{case['id']}/ask", json={"question": "When is the rent due?"})
            assert asked.status_code == 503 and asked.json()["error"]["code"] == "AI_UNAVAILABLE"
            assert "pip install 'casefile[ai]'" in asked.json()["error"]["message"]

            doctor = subprocess.run(
                [slim_python, "-c", CLI, "doctor"],
                env=_env(data),
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            assert "warn  ai        this installation has no local AI models" in doctor.stdout, doctor.stdout

            # A worker with the models (this test's own environment) takes the job the node left.
            worker_env = {**_env(data), "CASEFILE_WORKER_ENABLED": "true"}
            with (tmp_path / "worker.log").open("wb") as output:
                worker = subprocess.Popen(
                    [str(Path(sys.executable).with_name("casefile")), "worker"],
                    env=worker_env,
                    stdout=output,
                    stderr=subprocess.STDOUT,
                )
            processed = wait_until(
                lambda: (
                    (d := client.get(f"/documents/{document_id}").json()["data"])["processing_status"]
                    in ("completed", "failed")
                    and d
                ),
                timeout=240,
                interval=0.5,
            )
            assert processed["processing_status"] == "completed", (tmp_path / "worker.log").read_text()[
                -3000:
            ]
            assert processed["ai"]["word_count"] > 10
    finally:
        for process in (slim, worker):
            if process is not None:
                process.terminate()
                process.wait(timeout=60)
