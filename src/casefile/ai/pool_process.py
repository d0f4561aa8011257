"""The start of an AI pool process (`ai/worker.py` starts one per slot, with `spawn`): it is tied
to its parent's life first, then loads the models.

A pool process holds a model (hundreds of MB); if the server or worker that started it is killed
(SIGKILL, the out-of-memory killer), nothing else would end it. On Linux the kernel sends it
SIGKILL when its parent dies (`PR_SET_PDEATHSIG`); elsewhere a thread watches the parent id.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
PARENT_CHECK_SECONDS = 1.0


def initialize(parent_pid: int, memory_limit_bytes: int | None = None) -> None:
    """The pool's initializer: end with `parent_pid`, load the models, then cap the process's
    memory (address space) at `memory_limit_bytes`."""
    end_with_parent(parent_pid)
    from casefile.ai.processing import warm_up

    warm_up()
    if memory_limit_bytes is not None:
        limit_memory(memory_limit_bytes)


def limit_memory(limit_bytes: int) -> None:
    """A document that makes a parser or OCR (a child process, which inherits the limit) ask for
    more than this gets MemoryError, or the process dies and is replaced (ai/worker.py): the job
    fails, the server and its other jobs do not. Linux and other Unixes (`RLIMIT_AS`)."""
    try:
        import resource
    except ImportError:  # Windows: no such limit
        return
    resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))


def end_with_parent(parent_pid: int) -> None:
    if not (sys.platform.startswith("linux") and _kill_me_when_parent_dies()):
        threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True, name="parent-watch").start()
    # The parent may have died before the request above took effect: then we are already orphaned.
    if os.getppid() != parent_pid:
        os._exit(1)


def _kill_me_when_parent_dies() -> bool:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        return int(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _watch_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(PARENT_CHECK_SECONDS)
    os._exit(1)  # orphaned: reparented to init or a subreaper
