"""`casefile backup` and `casefile restore` with content in an S3-compatible bucket (moto on
loopback): the archive carries the bucket's objects, and a restore into an empty bucket puts them
back; a restore over a bucket with content is refused unless forced, and then leaves exactly the
backup's objects."""

from __future__ import annotations

import hashlib
import secrets
import tarfile
from contextlib import ExitStack
from pathlib import Path

from tests.backup.scenario import casefile, cli_env, upload
from tests.support.factories import new_case
from tests.support.processes import settings_env
from tests.support.s3 import S3Server
from tests.support.servers import fresh_database, make_settings, running_server, serving

MIB = 1024 * 1024


def test_backup_and_restore_with_content_in_a_bucket(backend: str, s3: S3Server, tmp_path: Path) -> None:
    source_bucket = s3.new_bucket()
    small = b"Settlement agreement, final draft.\n" * 20
    large = b"".join(f"{n:08d} deposition transcript line\n".encode() for n in range(200_000))  # ~7 MiB
    with running_server(backend, tmp_path, storage_part_mb=5, **s3.settings(source_bucket)) as api:
        with api.admin() as admin:
            case = new_case(admin)
            docs = [
                upload(admin, case["id"], content, name)
                for content, name in ((small, "a.txt"), (large, "b.txt"))
            ]
        archive = tmp_path / "backup.tar"
        result = casefile("backup", "--output", str(archive), env=cli_env(api.settings))
        assert result.returncode == 0, result.stderr
    with tarfile.open(archive) as tar:
        content = {
            m.name.rsplit("/", 1)[-1]: m.size for m in tar.getmembers() if m.name.startswith("content/")
        }
    assert content == {
        hashlib.sha256(small).hexdigest(): len(small),
        hashlib.sha256(large).hexdigest(): len(large),
    }

    with ExitStack() as stack:
        target_bucket = s3.new_bucket()
        data_dir = tmp_path / f"restored-{secrets.token_hex(4)}"
        url = stack.enter_context(fresh_database(backend, data_dir))
        settings = make_settings(data_dir, url, **s3.settings(target_bucket))
        env = settings_env(settings)
        env.pop("CASEFILE_SECRET_KEY")
        env.pop("CASEFILE_JWT_SECRET")
        stray_key = "content/00/00/" + "0" * 64
        s3.put(target_bucket, stray_key, b"x")

        refused = casefile("restore", "--input", str(archive), env=env)
        assert refused.returncode != 0 and "--force" in refused.stderr
        assert s3.keys(target_bucket) == [stray_key]  # nothing changed

        restored = casefile("restore", "--input", str(archive), "--force", env=env)
        assert restored.returncode == 0, restored.stderr
        keys = sorted(s3.keys(target_bucket))
        assert keys == sorted(f"content/{_name(body)}" for body in (small, large))
        assert not [p for p in (data_dir / "content").rglob("*") if p.is_file()]
        api = stack.enter_context(serving(settings))
        with api.admin() as admin:
            for doc, expected in zip(docs, (small, large), strict=True):
                response = admin.get(f"/documents/{doc['id']}/content")
                assert response.status_code == 200 and response.content == expected


def _name(content: bytes) -> str:
    sha256 = hashlib.sha256(content).hexdigest()
    return f"{sha256[:2]}/{sha256[2:4]}/{sha256}"
