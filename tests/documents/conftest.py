"""Documents' fixtures: the content store's view, a case to upload to."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.documents.samples import Storage
from tests.support.factories import new_case
from tests.support.servers import Api


@pytest.fixture
def storage(api: Api) -> Storage:
    return Storage(api)


@pytest.fixture
def case(admin: httpx.Client) -> dict[str, Any]:
    return new_case(admin)
