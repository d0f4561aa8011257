"""One-off requests without a client (`plain.get(url)`), with the suite's timeout: on a loaded
machine (two test workers, servers and AI processes on two cores) an answer can take longer than
httpx's default of 5 s, and a test must fail on a wrong answer, not on a slow one."""

from __future__ import annotations

from typing import Any

import httpx

TIMEOUT = 30.0


def get(url: str, **kw: Any) -> httpx.Response:
    kw.setdefault("timeout", TIMEOUT)
    return httpx.get(url, **kw)


def post(url: str, **kw: Any) -> httpx.Response:
    kw.setdefault("timeout", TIMEOUT)
    return httpx.post(url, **kw)
