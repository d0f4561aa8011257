"""Documents' fixtures: the server (on each database, with content in the data dir and in an
S3-compatible bucket), the content store's view, a case to upload to."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.documents.samples import Storage
from tests.support.factories import new_case
from tests.support.servers import Api, running_server


@pytest.fixture(scope="session")
def api(
    api: Api,
    backend: str,
    content_store: str,
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Api]:
    """The shared server for content in the data dir; for content in a bucket, a server of the
    documents tests' own on a bucket of its own (tests.support.s3)."""
    if content_store == "local":
        yield api
        return
    s3 = request.getfixturevalue("s3")
    overrides = s3.settings(s3.new_bucket())
    with running_server(backend, tmp_path_factory.mktemp(f"documents-s3-{backend}"), **overrides) as server:
        yield server


@pytest.fixture
def storage(api: Api) -> Storage:
    return Storage(api)


@pytest.fixture
def case(admin: httpx.Client) -> dict[str, Any]:
    return new_case(admin)
