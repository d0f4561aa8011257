"""Content in an S3-compatible bucket (moto on loopback, tests.support.s3): the store itself (the
hash checked as it writes, multipart uploads, ranged reads), and two API machines sharing one
PostgreSQL database and one bucket, each serving what the other stored."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import pytest

from casefile.storage.s3 import ContentMismatch, S3Config, S3ContentStore
from tests.support.assertions import ok
from tests.support.factories import new_case, upload
from tests.support.processes import Process
from tests.support.s3 import REGION, S3Server
from tests.support.servers import ADMIN_EMAIL, ADMIN_PASSWORD, BACKENDS, fresh_database, make_settings

MIB = 1024 * 1024


def _store(s3: S3Server, bucket: str, tmp_path: Path, part_mb: int = 5) -> S3ContentStore:
    config = S3Config(
        bucket=bucket,
        prefix="content",
        endpoint=s3.endpoint,
        region=REGION,
        access_key_id="casefile-test",
        secret_access_key="casefile-test-secret",
        server_side_encryption="AES256",
        part_bytes=part_mb * MIB,
        concurrency=2,
    )
    return S3ContentStore(config, tmp_path / "tmp")


def _file(tmp_path: Path, content: bytes) -> tuple[Path, str]:
    path = tmp_path / f"upload-{secrets.token_hex(4)}.part"
    path.write_bytes(content)
    return path, hashlib.sha256(content).hexdigest()


async def _read(store: S3ContentStore, sha256: str, start: int = 0, length: int | None = None) -> bytes:
    return b"".join([chunk async for chunk in store.read(sha256, start, length)])


@pytest.mark.anyio
@pytest.mark.parametrize("size", [1000, 12 * MIB + 7], ids=["one-put", "multipart"])
async def test_the_store_writes_reads_ranges_and_deletes(s3: S3Server, tmp_path: Path, size: int) -> None:
    bucket = s3.new_bucket()
    store = _store(s3, bucket, tmp_path)
    content = secrets.token_bytes(size)
    source, sha256 = _file(tmp_path, content)
    await store.put(sha256, source)
    assert not source.exists()  # the store took the file
    key = f"content/{sha256[:2]}/{sha256[2:4]}/{sha256}"
    assert s3.keys(bucket) == [key]
    assert s3.get(bucket, key) == content
    assert await store.exists(sha256)
    assert await _read(store, sha256) == content
    assert await _read(store, sha256, size - 100) == content[-100:]
    middle = size // 2
    assert await _read(store, sha256, middle - 10, 20) == content[middle - 10 : middle + 10]
    async with store.local_file(sha256) as path:
        assert path.read_bytes() == content
    assert not path.exists()
    again, _ = _file(tmp_path, content)
    await store.put(sha256, again)  # stored already: the file is dropped, the object kept
    assert not again.exists() and s3.keys(bucket) == [key]
    await store.delete(sha256)
    assert s3.keys(bucket) == [] and not await store.exists(sha256)


@pytest.mark.anyio
@pytest.mark.parametrize("size", [1000, 12 * MIB], ids=["one-put", "multipart"])
async def test_content_that_is_not_its_hash_is_not_stored(s3: S3Server, tmp_path: Path, size: int) -> None:
    """The SHA-256 is checked as the bytes are sent: a multipart upload is aborted, not completed."""
    bucket = s3.new_bucket()
    store = _store(s3, bucket, tmp_path)
    source, _ = _file(tmp_path, secrets.token_bytes(size))
    with pytest.raises(ContentMismatch):
        await store.put(hashlib.sha256(b"something else").hexdigest(), source)
    assert s3.keys(bucket) == []
    assert s3.open_multipart_uploads(bucket) == []
    assert not source.exists()


# --- two API machines: one database, one bucket ---------------------------------------------


@pytest.fixture
def machines(s3: S3Server, tmp_path: Path) -> Iterator[tuple[S3Server, str, list[Process]]]:
    """Two `casefile serve` processes with data dirs of their own, one PostgreSQL database, one
    bucket, and the same signing keys (as machines behind one load balancer have)."""
    if "postgresql" not in BACKENDS:
        pytest.skip("PostgreSQL is not reachable: machines cannot share SQLite")
    bucket = s3.new_bucket()
    shared = {
        **s3.settings(bucket),
        "storage_part_mb": 5,
        "jwt_secret": secrets.token_urlsafe(48),
        "secret_key": secrets.token_urlsafe(48),
    }
    with ExitStack() as stack:
        url = stack.enter_context(fresh_database("postgresql", tmp_path / "db"))
        started: list[Process] = []
        for name in ("a", "b"):  # one after the other: the first migrates the database
            settings = make_settings(tmp_path / f"machine-{name}", url, **shared)
            process = Process("serve", settings, tmp_path / f"machine-{name}.log")
            stack.callback(process.stop)
            started.append(process)
        yield s3, bucket, started


@contextmanager
def _client(process: Process) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=process.base, timeout=60) as client:
        r = client.post("/auth/login", json={"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD})
        client.headers["Authorization"] = f"Bearer {ok(r)['token']}"
        yield client


def test_two_machines_serve_what_the_other_stored(machines, tmp_path: Path) -> None:
    s3, bucket, (a, b) = machines
    small = b"Engagement letter, signed by both parties.\n" * 10
    large = b"".join(f"{n:08d} exhibit page text\n".encode() for n in range(440_000))  # ~11 MiB: 3 parts
    with _client(a) as on_a, _client(b) as on_b:
        case = new_case(on_a)
        from_a = ok(upload(on_a, case["id"], small, "letter.txt"), 201)
        from_b = ok(upload(on_b, case["id"], large, "exhibits.txt"), 201)
        assert from_b["sha256"] == hashlib.sha256(large).hexdigest()

        r = on_b.get(f"/documents/{from_a['id']}/content")
        assert r.status_code == 200 and r.content == small
        assert r.headers["etag"] == f'"{from_a["sha256"]}"'
        r = on_a.get(f"/documents/{from_b['id']}/content")
        assert r.status_code == 200 and r.content == large
        # A range across the first part's end (5 MiB), read by the machine that did not store it.
        r = on_a.get(f"/documents/{from_b['id']}/content", headers={"Range": "bytes=5242000-5243999"})
        assert r.status_code == 206 and r.content == large[5_242_000:5_244_000]

        # Neither machine keeps content in its data dir: it is all in the bucket.
        for name in ("a", "b"):
            content_dir = tmp_path / f"machine-{name}" / "content"
            assert not [p for p in content_dir.rglob("*") if p.is_file()]
        stored = {key.rsplit("/", 1)[-1] for key in s3.keys(bucket, "content/")}
        assert stored == {from_a["sha256"], from_b["sha256"]}

        # Deleted and purged on one machine: gone from the bucket, and from the other machine.
        ok(on_b.delete(f"/documents/{from_a['id']}"))
        ok(on_b.delete(f"/admin/trash/{from_a['id']}"))
        assert {key.rsplit("/", 1)[-1] for key in s3.keys(bucket, "content/")} == {from_b["sha256"]}
        assert on_a.get(f"/documents/{from_a['id']}/content").status_code == 404
