"""docs/first-integration.md works as written: its blocks run, in order, against a live server."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from tests.support.servers import ADMIN_EMAIL, ADMIN_PASSWORD, free_port

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "first-integration.md"


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", PAGE.read_text(), flags=re.DOTALL)


def test_the_first_integration_page_runs(make_server, tmp_path: Path) -> None:
    api = make_server()  # test servers allow loopback webhook targets, as the page says to
    [receiver] = blocks("python")
    assert receiver.startswith("# receiver.py\n")
    (tmp_path / "receiver.py").write_text(receiver)
    port = str(free_port())
    script = "set -euo pipefail\n" + "\n".join(blocks("sh")).replace("8765", port)
    env = {
        **os.environ,
        "CASEFILE_URL": api.root,
        "CASEFILE_EMAIL": ADMIN_EMAIL,
        "CASEFILE_PASSWORD": ADMIN_PASSWORD,
        "PYTHONPATH": str(ROOT / "receiver" / "src"),
    }
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "case: case_" in done.stdout
    assert "Engagement letter for Smith v. Jones." in done.stdout
    assert "204" in done.stdout and "the signature checked out" in done.stdout
    assert re.search(r"^verified webhook_\w+$", (tmp_path / "receiver.log").read_text(), flags=re.M)
