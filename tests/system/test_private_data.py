"""The data dir holds password hashes, document text and the keys: whatever the umask, nobody but
the service's own user can read it (directories 0700, files 0600)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.assertions import ok
from tests.support.factories import new_case, upload


@pytest.fixture
def permissive_umask() -> Iterator[None]:
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def test_data_dir_and_everything_in_it_are_private(permissive_umask: None, make_server) -> None:
    api = make_server()
    with api.admin() as admin:
        case = new_case(admin)
        ok(upload(admin, case["id"], b"Privileged memo for the private data test\n"), 201)
    api.settings.encryption_key  # noqa: B018 - made on first use, like the JWT key
    data_dir = api.settings.data_dir
    assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700
    seen: list[Path] = []
    for path in [data_dir, *data_dir.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode & 0o077 == 0, f"{path} is {oct(mode)}"
        seen.append(path.relative_to(data_dir))
    names = {p.name for p in seen}
    assert {"jwt-secret", "secret-key", "content"} <= names, seen
    if api.settings.is_sqlite:
        assert "casefile.db" in names, seen
    assert any(len(p.parts) == 4 and p.parts[0] == "content" for p in seen), seen  # a content file
