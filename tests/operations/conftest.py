"""Fixtures of the operations tests."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest


@pytest.fixture
def hooks(admin: httpx.Client) -> Iterator[list[str]]:
    """Webhooks a test registered; deleted afterwards so later tests' receivers get nothing."""
    made: list[str] = []
    yield made
    for hook_id in made:
        admin.delete(f"/admin/webhooks/{hook_id}")
