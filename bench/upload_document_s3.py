"""A large upload with content in an S3-compatible bucket: the API server's memory (target: a
1 GiB upload grows its RSS by < 64 MiB) and throughput, as bench/upload_document.py measures on
local files, with `CASEFILE_STORAGE_URL=s3://...`.

It starts moto's standalone S3 server on a free loopback port (the `moto_server` of `.venv-moto`,
made from tests/support/moto-requirements.txt, or `--moto-server PATH`), makes a bucket, and runs
bench/upload_document.py's measurement against a `casefile serve` storing content there: the
upload streams to the bucket as a multipart upload (parts of CASEFILE_STORAGE_PART_MB, default 8,
CASEFILE_STORAGE_UPLOAD_CONCURRENCY in flight, default 4), and the stored object's size is checked
with a HEAD. moto keeps the objects in its own process (spooled to temporary files), so only the
API server's memory is measured. Options: those of upload_document.py, plus --moto-server.

    .venv/bin/python bench/upload_document_s3.py              # 1 GiB
    .venv/bin/python bench/upload_document_s3.py --smoke      # 1 MiB, seconds
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import upload_document as bench

MOTO = bench.ROOT / ".venv-moto" / "bin" / "moto_server"
# moto answers an anonymous read of a private object 403, and checks no signature: any will do.
AUTH = {
    "Authorization": "AWS4-HMAC-SHA256 Credential=bench/20260101/us-east-1/s3/aws4_request, "
    "SignedHeaders=host, Signature=0"
}


def moto_command(argv: list[str]) -> tuple[str, list[str]]:
    if "--moto-server" in argv:
        at = argv.index("--moto-server")
        return argv[at + 1], argv[:at] + argv[at + 2 :]
    found = str(MOTO) if MOTO.is_file() else shutil.which("moto_server")
    if found is None:
        raise SystemExit(
            "no moto_server: python3 -m venv .venv-moto && "
            ".venv-moto/bin/pip install -r tests/support/moto-requirements.txt"
        )
    return found, argv


@contextmanager
def moto_bucket(command: str) -> Iterator[tuple[dict[str, str], Callable[[str], int | None]]]:
    """moto's S3 server on a free loopback port with a fresh bucket: the server settings that store
    content there, and the stored size of a content key (None: not stored). Stopped on exit."""
    port = bench.free_port()
    endpoint = f"http://{bench.HOST}:{port}"
    log = Path(tempfile.mkdtemp(prefix="casefile-moto-")) / "moto.log"
    with log.open("wb") as output:
        moto = subprocess.Popen(
            [command, "-H", bench.HOST, "-p", str(port)], stdout=output, stderr=subprocess.STDOUT
        )
    try:
        give_up = time.monotonic() + 60
        while True:
            try:
                if httpx.get(endpoint, timeout=1, trust_env=False).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if moto.poll() is not None or time.monotonic() > give_up:
                raise SystemExit(f"moto_server did not start: {log.read_text()[-2000:]}")
            time.sleep(0.1)
        bucket = f"bench-{secrets.token_hex(4)}"
        httpx.put(f"{endpoint}/{bucket}", headers=AUTH, trust_env=False).raise_for_status()
        bench.log(f"moto S3 server at {endpoint}, bucket {bucket}")

        def stored(sha256: str) -> int | None:
            key = f"content/{sha256[:2]}/{sha256[2:4]}/{sha256}"
            response = httpx.head(f"{endpoint}/{bucket}/{key}", headers=AUTH, trust_env=False, timeout=30)
            return int(response.headers["content-length"]) if response.status_code == 200 else None

        env = {
            "CASEFILE_STORAGE_URL": f"s3://{bucket}/content",
            "CASEFILE_STORAGE_ENDPOINT": endpoint,
            "CASEFILE_STORAGE_REGION": "us-east-1",
            "CASEFILE_STORAGE_ACCESS_KEY_ID": "bench",
            "CASEFILE_STORAGE_SECRET_ACCESS_KEY": "bench-secret",
            # The upload's memory, not the AI models': with processing on, the AI worker (a child
            # process the sampler counts) loads its models while the body streams in, and then
            # reads the 1 GiB document. CASEFILE_AI_ENABLED=true measures with it.
            "CASEFILE_AI_ENABLED": "false",
        }
        passed = ("CASEFILE_STORAGE_", "CASEFILE_AI_ENABLED")
        env.update({k: v for k, v in os.environ.items() if k.startswith(passed)})
        yield env, stored
    finally:
        moto.terminate()
        moto.wait(timeout=10)
        shutil.rmtree(log.parent, ignore_errors=True)


def main(argv: list[str]) -> int:
    command, rest = moto_command(argv)
    with moto_bucket(command) as (env, stored):
        return bench.main(rest, benchmark="upload_document_s3", extra_env=env, stored=stored)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
