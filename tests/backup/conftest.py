"""The backup tests' fixtures: one populated source per database, backed up once, and its restore."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack

import pytest

from tests.backup.scenario import (
    Source,
    Writer,
    casefile,
    cli_env,
    make_target,
    populate,
)
from tests.support.receivers import receiver_server
from tests.support.servers import Api, running_server, serving
from tests.support.waiting import wait_until


@pytest.fixture(scope="module")
def source(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Source]:
    root = tmp_path_factory.mktemp(f"backup-{backend}")
    with (
        receiver_server() as receiver,
        running_server(backend, root, rate_limit_user="100000/hour") as api,
    ):
        archive = root / "casefile-backup.tar"
        src = Source(api=api, receiver=receiver, archive=archive, backup=None)  # type: ignore[arg-type]
        populate(api, receiver, src)
        writer = Writer(api, src)
        writer.start()
        wait_until(lambda: writer.writes >= 3 or writer.error, timeout=30)
        writer.backup_running.set()
        src.backup = casefile("backup", "--output", str(archive), env=cli_env(api.settings))
        writer.backup_running.clear()
        after = writer.writes
        wait_until(lambda: writer.writes >= after + 2 or writer.error, timeout=30)
        writer.stop.set()
        writer.join(timeout=30)
        assert writer.error is None, writer.error
        assert src.backup.returncode == 0, src.backup.stderr
        yield src


@pytest.fixture(scope="module")
def restored(source: Source, backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    """A server on the backup, restored into a fresh data dir and database."""
    with ExitStack() as stack:
        target = make_target(stack, backend, tmp_path_factory.mktemp("restored"))
        result = casefile("restore", "--input", str(source.archive), env=target.env)
        assert result.returncode == 0, result.stderr
        yield stack.enter_context(serving(target.settings))
