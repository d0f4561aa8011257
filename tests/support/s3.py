"""A real S3-compatible server for the tests: moto's standalone server (moto[server], pinned in
tests/support/moto-requirements.txt), started as a child process on a free loopback port.

moto needs botocore, whose python-dateutil pin conflicts with casefile's, so it lives in a
virtualenv of its own: CASEFILE_TEST_MOTO_SERVER names its `moto_server`, else `.venv-moto` at the
root of the checkout (made by .ci/run, or by the first test run that needs it), else one on PATH.
Where none can be made (no package index) the S3 tests are skipped, except in CI
(CASEFILE_TEST_REQUIRE_POSTGRES=1), where that fails the run.

The tests look at the bucket over plain HTTP (moto does not check signatures), not through
casefile's store: what they see is what the server holds.
"""

from __future__ import annotations

import fcntl
import os
import secrets
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.servers import REQUIRE_SERVICES, free_port
from tests.support.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
REGION = "us-east-1"
_NS = "{http://s3.amazonaws.com/doc/2006-03-01/}"
# moto answers an anonymous read of a private object 403, and checks no signature: any will do.
_AUTH = {
    "Authorization": "AWS4-HMAC-SHA256 Credential=casefile-test/20260101/us-east-1/s3/aws4_request, "
    "SignedHeaders=host, Signature=0"
}


def moto_server_command() -> str | None:
    named = os.environ.get("CASEFILE_TEST_MOTO_SERVER")
    if named:
        return named
    local = ROOT / ".venv-moto" / "bin" / "moto_server"
    if not local.is_file() and shutil.which("moto_server") is None:
        _make_moto_virtualenv(local.parents[1])
    return str(local) if local.is_file() else shutil.which("moto_server")


def _make_moto_virtualenv(target: Path) -> None:
    """The README's test command runs the S3 tests too: the first run makes `.venv-moto` from the
    package index (as .ci/run does), once, under a lock shared by the test processes."""
    with (ROOT / ".venv-moto.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target / "bin" / "moto_server").is_file():
            return
        requirements = ROOT / "tests" / "support" / "moto-requirements.txt"
        made = subprocess.run([sys.executable, "-m", "venv", str(target)], check=False, capture_output=True)
        if made.returncode == 0:
            pip = [str(target / "bin" / "pip"), "install", "-q", "-r", str(requirements)]
            subprocess.run(pip, check=False, capture_output=True, timeout=600)


@dataclass
class S3Server:
    endpoint: str

    def new_bucket(self) -> str:
        name = f"casefile-{secrets.token_hex(6)}"
        response = httpx.put(f"{self.endpoint}/{name}", headers=_AUTH, timeout=30)
        assert response.status_code == 200, response.text
        return name

    def settings(self, bucket: str, prefix: str = "content") -> dict[str, Any]:
        """The settings of a casefile storing content in `bucket` under `prefix`."""
        return {
            "storage_url": f"s3://{bucket}/{prefix}",
            "storage_endpoint": self.endpoint,
            "storage_region": REGION,
            "storage_access_key_id": "casefile-test",
            "storage_secret_access_key": "casefile-test-secret",
        }

    def keys(self, bucket: str, prefix: str = "") -> list[str]:
        """Every object name under `prefix` (ListObjectsV2, all pages)."""
        found: list[str] = []
        token: str | None = None
        while True:
            params = {"list-type": "2", "prefix": prefix, **({"continuation-token": token} if token else {})}
            response = httpx.get(f"{self.endpoint}/{bucket}", params=params, headers=_AUTH, timeout=30)
            assert response.status_code == 200, response.text
            tree = ET.fromstring(response.content)
            found += [key.text or "" for key in tree.iter(f"{_NS}Key")]
            token = tree.findtext(f"{_NS}NextContinuationToken")
            if not token:
                return found

    def get(self, bucket: str, key: str) -> bytes | None:
        response = httpx.get(f"{self.endpoint}/{bucket}/{key}", headers=_AUTH, timeout=30)
        if response.status_code == 404:
            return None
        assert response.status_code == 200, (response.status_code, response.headers, response.text)
        return response.content

    def put(self, bucket: str, key: str, content: bytes) -> None:
        response = httpx.put(f"{self.endpoint}/{bucket}/{key}", content=content, headers=_AUTH, timeout=30)
        assert response.status_code == 200, response.text

    def open_multipart_uploads(self, bucket: str) -> list[str]:
        response = httpx.get(f"{self.endpoint}/{bucket}", params={"uploads": ""}, headers=_AUTH, timeout=30)
        assert response.status_code == 200, response.text
        return [key.text or "" for key in ET.fromstring(response.content).iter(f"{_NS}Key")]


@contextmanager
def s3_server(log: Path) -> Iterator[S3Server]:
    command = moto_server_command()
    if command is None:
        if REQUIRE_SERVICES:
            raise RuntimeError("no moto_server: make .venv-moto (tests/support/moto-requirements.txt)")
        pytest.skip("no S3-compatible server: pip install -r tests/support/moto-requirements.txt")
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    with log.open("ab") as output:
        proc = subprocess.Popen(
            [command, "-H", "127.0.0.1", "-p", str(port)], stdout=output, stderr=subprocess.STDOUT
        )

    def up() -> bool:
        if proc.poll() is not None:
            raise RuntimeError(f"moto_server exited: {log.read_text()[-3000:]}")
        try:
            return httpx.get(endpoint, timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        wait_until(up, timeout=60, interval=0.1)
        yield S3Server(endpoint)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
