"""Documents' fixtures: the server (on each database, with content in the data dir and in an
S3-compatible bucket), the content store's view, a case to upload to."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import pytest

from tests.documents.samples import Storage
from tests.support.factories import new_case
from tests.support.servers import Api, running_server


@pytest.fixture(scope="session")
def s3_servers(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[[str], Api]]:
    """The documents tests' servers with content in a bucket, one per database, started when first
    asked for and kept for the run."""
    servers: dict[str, Api] = {}
    with ExitStack() as stack:

        def server_for(backend: str) -> Api:
            if backend not in servers:
                s3 = request.getfixturevalue("s3")
                overrides = s3.settings(s3.new_bucket())
                data_dir = tmp_path_factory.mktemp(f"documents-s3-{backend}")
                servers[backend] = stack.enter_context(running_server(backend, data_dir, **overrides))
            return servers[backend]

        yield server_for


@pytest.fixture(scope="module")
def api(api: Api, backend: str, content_store: str, s3_servers: Callable[[str], Api]) -> Api:
    """The shared server for content in the data dir; for content in a bucket, the documents
    tests' own server on a bucket of its own (tests.support.s3)."""
    return api if content_store == "local" else s3_servers(backend)


@pytest.fixture
def storage(api: Api) -> Storage:
    return Storage(api)


@pytest.fixture
def case(admin: httpx.Client) -> dict[str, Any]:
    return new_case(admin)
