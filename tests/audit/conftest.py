"""A migrated database of its own for each audit-chain test: tampering with one chain must not
leak into another test's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from casefile.migrate import upgrade
from casefile.settings import Settings
from tests.support.servers import make_settings


@pytest.fixture
def trail_settings(database: tuple[Path, str | None]) -> Iterator[Settings]:
    data_dir, url = database
    settings = make_settings(data_dir, url)
    upgrade(settings)
    yield settings
