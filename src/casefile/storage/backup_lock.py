"""The backup lock: a backup holds it while stored content must stay, content removal checks it.

A backup's database snapshot may refer to content whose document is deleted after the snapshot,
so the file must still be there when the backup copies it. The backup holds an exclusive `flock`
on `DATA_DIR/backup.lock` from before its snapshot until its last content file is copied; content
removal holds the same lock shared while it removes, and removes nothing while a backup holds it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

LOCK_FILE = "backup.lock"
LOCK_WAIT_SECONDS = 60.0


def _open_lock(data_dir: Path) -> int:
    data_dir.mkdir(parents=True, exist_ok=True)
    return os.open(data_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)


@contextlib.contextmanager
def backup_lock(data_dir: Path, *, wait_seconds: float = LOCK_WAIT_SECONDS) -> Iterator[None]:
    """Held by a backup from before its snapshot until its last content file is copied. Waits for
    content collections in progress (they hold the lock shared, for milliseconds). Raises
    TimeoutError (an OSError, as the other failures of a backup's file system) when another
    backup holds it."""
    fd = _open_lock(data_dir)
    try:
        deadline = time.monotonic() + wait_seconds
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError(
                        f"{data_dir / LOCK_FILE} is locked: is another backup of this data dir running?"
                    ) from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


@contextlib.contextmanager
def content_removal_allowed(data_dir: Path) -> Iterator[bool]:
    """Whether stored content may be removed now: False while a backup holds the lock. Holds the
    lock shared while the caller removes, so a backup cannot take its snapshot in between."""
    fd = _open_lock(data_dir)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)
