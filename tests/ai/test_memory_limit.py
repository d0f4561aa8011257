"""An AI process is capped in memory (CASEFILE_AI_MEMORY_LIMIT_MB): a job that asks for more than
the cap fails with MemoryError in that process, which goes on serving the next job."""

from __future__ import annotations

import multiprocessing
import os
import resource
import sys
from concurrent.futures import ProcessPoolExecutor

import pytest

from casefile.ai import pool_process

LIMIT = 1536 * 1024 * 1024


def _allocate(size: int) -> str:
    try:
        block = bytearray(size)
    except MemoryError:
        return "MemoryError"
    return f"allocated {len(block)}"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS is enforced on Linux")
def test_a_job_over_the_memory_cap_fails_and_the_process_serves_the_next() -> None:
    with ProcessPoolExecutor(
        max_workers=1,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=pool_process.initialize,
        initargs=(os.getpid(), LIMIT),
    ) as pool:
        assert pool.submit(_allocate, 2 * LIMIT).result(timeout=120) == "MemoryError"
        assert pool.submit(_allocate, 64 * 1024 * 1024).result(timeout=60) == f"allocated {64 * 1024 * 1024}"
    # The cap is the pool process's own, not its parent's.
    assert resource.getrlimit(resource.RLIMIT_AS)[0] != LIMIT
