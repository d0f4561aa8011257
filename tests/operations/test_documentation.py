"""Every command block of the README and of docs/ runs as a reader pastes it.

The reader's machine: a copy of the repository's files (a fresh clone), its `.venv` being the
environment this test runs in (installed by the README's own setup command, which is checked to be
the one the README shows), and an environment with no CASEFILE_* variable, no PYTHONPATH and no
virtualenv on PATH. Each document's shell blocks run in order, as one shell session per document
(`set -euo pipefail`, so a failing command fails the test); documents run in the order a reader
follows them. Nothing is substituted: the server listens on the README's port 8000 (one run of
this test at a time on a machine, under a lock), and the guides install what they say to install.

A block is marked by an HTML comment on the line before it:
- `<!-- doc-test: skip: <why> -->`: not run (it needs root, systemd, the internet, or it would run
  the test suite itself); the reason is required;
- `<!-- doc-test: server ... -->`: a server the reader leaves running: started in the background
  (stopping the one before it), and waited for on port 8000; "after its setup" means the block
  begins with the setup commands that created `.venv`, which are checked and not rerun.
A `python` block whose first line is `# <name>.py` is the file the reader saves under that name.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
FIRST = [
    "README.md",
    "docs/first-integration.md",
    "docs/operations.md",
    "docs/upgrading.md",
    "docs/deployment.md",
]
COMMAND_LANGUAGES = {"sh", "bash", "shell", "console", "sql", "psql"}
PORT = 8000  # the README's
README_SETUP = ["python3 -m venv .venv", ".venv/bin/pip install -e '.[ai]'"]
LOCK = Path("/tmp/casefile-documentation-test.lock")

_FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w-]*)\s*$")
_MARKER = re.compile(r"^\s*<!-- doc-test: (?P<what>.*?) -->\s*$")


@dataclass
class Block:
    document: str
    line: int
    language: str
    text: str
    marker: str | None

    @property
    def where(self) -> str:
        return f"{self.document}:{self.line}"


def blocks_of(document: str) -> list[Block]:
    lines = (ROOT / document).read_text().splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        indent, language = len(opening["indent"]), opening["lang"]
        end = i + 1
        while not (lines[end].strip() == "```" and len(lines[end]) - len(lines[end].lstrip()) == indent):
            end += 1
        body = "\n".join(line[indent:] for line in lines[i + 1 : end])
        previous = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        marker = _MARKER.match(previous)
        found.append(Block(document, i + 1, language, body, marker["what"] if marker else None))
        i = end + 1
    return found


def documents() -> list[str]:
    others = sorted(
        str(path.relative_to(ROOT))
        for path in (ROOT / "docs").rglob("*.md")
        if str(path.relative_to(ROOT)) not in FIRST
    )
    return FIRST + others


def test_every_command_block_is_run_or_says_why_not() -> None:
    for document in documents():
        for block in blocks_of(document):
            if block.marker is not None and block.marker.startswith("skip"):
                assert len(block.marker.removeprefix("skip:").strip()) >= 20, f"{block.where}: say why"
            elif block.marker is not None:
                assert block.marker.startswith("server"), f"{block.where}: unknown marker {block.marker!r}"
            elif block.language in COMMAND_LANGUAGES - {"sh", "bash", "shell"}:
                pytest.fail(f"{block.where}: a {block.language} block the test cannot run: mark it")


# ---- the reader's machine ----------------------------------------------------------------------


def _reader_environment() -> dict[str, str]:
    venv_bin = Path(sys.prefix, "bin").resolve()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CASEFILE_", "PYTHON", "VIRTUAL_ENV", "PYTEST", "COV_"))
    }
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "/usr/bin:/bin").split(os.pathsep) if p and Path(p).resolve() != venv_bin
    )
    return env


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """The repository's files as a fresh clone has them, and `.venv`: this test's environment."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    target = tmp_path / "casefile"
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    (target / ".venv").symlink_to(sys.prefix)
    return target


@pytest.fixture
def port_lock() -> Iterator[None]:
    """One run of this test at a time on a machine: the README's port is fixed."""
    with LOCK.open("w") as handle:
        deadline = time.monotonic() + 600
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                assert time.monotonic() < deadline, "another run of the documentation test holds the lock"
                time.sleep(1)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class Servers:
    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self.cwd, self.env = cwd, env
        self.current: subprocess.Popen[bytes] | None = None
        self.count = 0

    def start(self, block: Block) -> None:
        self.stop()
        command = block.text.strip()
        if "after its setup" in (block.marker or ""):
            *setup, command = command.split(" && ")
            assert setup == README_SETUP, f"{block.where}: the setup is not the one this environment has"
        with socket.socket() as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(("127.0.0.1", PORT))
            except OSError:
                pytest.fail(
                    f"port {PORT}, which the README uses, is taken by another program on this machine"
                )
        self.count += 1
        with (self.cwd.parent / f"server-{self.count}.log").open("wb") as log:  # the child keeps a copy
            self.current = subprocess.Popen(
                ["bash", "-c", command],
                cwd=self.cwd,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        deadline = time.monotonic() + 120
        while True:
            assert self.current.poll() is None, f"{block.where}: the server exited: {self.log()}"
            try:
                if httpx.get(f"http://127.0.0.1:{PORT}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, f"{block.where}: the server did not answer: {self.log()}"
            time.sleep(0.1)

    def log(self) -> str:
        return (self.cwd.parent / f"server-{self.count}.log").read_text()[-3000:]

    def stop(self) -> None:
        if self.current is not None and self.current.poll() is None:
            os.killpg(self.current.pid, signal.SIGTERM)
            try:
                self.current.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.current.pid, signal.SIGKILL)
                self.current.wait(timeout=10)
        self.current = None


def _run_shell(blocks: list[Block], cwd: Path, env: dict[str, str]) -> str:
    if not blocks:
        return ""
    script = "set -euo pipefail\n" + "\n".join(block.text for block in blocks)
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    where = ", ".join(block.where for block in blocks)
    assert done.returncode == 0, f"{where} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def run_document(document: str, cwd: Path, env: dict[str, str], servers: Servers) -> str:
    """The document's blocks in order: files saved, servers started, shell blocks run as one session
    between servers. Returns what the shell blocks printed."""
    output, pending = "", []
    for block in blocks_of(document):
        if block.marker is not None and block.marker.startswith("skip"):
            continue
        if block.marker is not None and block.marker.startswith("server"):
            output += _run_shell(pending, cwd, env)
            pending = []
            servers.start(block)
        elif block.language == "python" and re.match(r"# [\w.-]+\.py\n", block.text):
            (cwd / block.text.split("\n", 1)[0][2:]).write_text(block.text)
        elif block.language in ("sh", "bash", "shell"):
            pending.append(block)
    return output + _run_shell(pending, cwd, env)


def test_the_readme_and_the_guides_run_as_written(checkout: Path, port_lock: None) -> None:
    env = _reader_environment()
    servers = Servers(checkout, env)
    try:
        readme = run_document("README.md", checkout, env, servers)
        assert servers.count == 1  # the Quickstart's server
        assert re.search(r"^created case_\w+$", readme, flags=re.M), readme
        assert '"title":"Delivery memo"' in readme and '"file_name":"memo.txt"' in readme
        assert '"due_on":"2026-12-28"' in readme  # the deadlines example's comment
        # (after the JSON curl printed, which ends without a newline)
        assert re.search(r"backup \S*/backups/casefile-[\d-]+\.tar\.gz size=\d+ sha256=", readme), readme
        assert "restored backup of" in readme and "cases=1 documents=1" in readme

        integration = run_document("docs/first-integration.md", checkout, env, servers)
        assert servers.count == 2  # restarted with the development setting
        assert "case: case_" in integration
        assert "Engagement letter for Smith v. Jones." in integration
        assert "204" in integration and "the signature checked out" in integration
        assert re.search(r"^verified webhook_\w+$", (checkout / "receiver.log").read_text(), flags=re.M)
        assert re.search(r"^case\.created$", integration, flags=re.M)  # the event catalogue
        assert "recovery completed" in integration

        operations = run_document("docs/operations.md", checkout, env, servers)
        assert re.search(r"^ok +database +SQLite at .*this release's$", operations, flags=re.M), operations
        assert "created administrator ops@example.com" in operations
        assert "password changed for ops@example.com" in operations
        assert re.search(r"^ops@example\.com +admin +active", operations, flags=re.M)

        upgrading = run_document("docs/upgrading.md", checkout, env, servers)
        assert "database is up to date" in upgrading
        from casefile import __version__

        assert f"casefile {__version__}" in upgrading

        for document in documents()[4:]:
            run_document(document, checkout, env, servers)  # nothing else is left to run
    finally:
        servers.stop()
