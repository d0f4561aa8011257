"""What a process builds when it starts: its `Runtime` (the database, the content store, and
authentication's deny-list, caller cache and single sign-on client), the stale uploads it clears,
and its garbage collector's settings. Above the domains: `runtime.py` holds the dataclass, this
module assembles it."""

from __future__ import annotations

import contextlib
import gc
import time
from pathlib import Path

from redis.asyncio import Redis

from casefile.auth.denylist import DatabaseDenyList, DenyList, RedisDenyList
from casefile.auth.oidc import OidcClient
from casefile.auth.principal_cache import INFO_CACHE, PrincipalCache, watch_session_changes
from casefile.db import Database
from casefile.metrics import Metrics
from casefile.ratelimit import RateLimiter
from casefile.runtime import Runtime
from casefile.secretbox import SecretBox
from casefile.settings import Settings
from casefile.storage import open_content_store
from casefile.system_errors import ErrorReporter
from casefile.worker.wakeup import Wakeup


def start_runtime(settings: Settings, metrics: Metrics | None = None) -> Runtime:
    """The runtime of a process that serves, works or runs a command against the database."""
    settings.ensure_data_dir()
    settings.content_dir.mkdir(exist_ok=True)
    settings.upload_temp_dir.mkdir(exist_ok=True)
    _remove_stale_uploads(settings.upload_temp_dir)
    redis = Redis.from_url(settings.redis_url) if settings.redis_url else None
    deny_list: DenyList = RedisDenyList(redis) if redis is not None else DatabaseDenyList()
    wakeup = Wakeup(redis)
    principals = PrincipalCache(redis, settings.redis_key_prefix)
    watch_session_changes()
    db = Database(settings, session_info={"wakeup": wakeup, INFO_CACHE: principals})
    return Runtime(
        settings=settings,
        db=db,
        deny_list=deny_list,
        redis=redis,
        store=open_content_store(settings.s3_storage, settings.content_dir, settings.upload_temp_dir),
        secret_box=SecretBox(settings.encryption_key),
        wakeup=wakeup,
        ai_wakeup=Wakeup(),
        limiter=RateLimiter(settings, redis),
        errors=ErrorReporter(db, redis, settings.redis_key_prefix),
        principals=principals,
        oidc=OidcClient.from_settings(settings),
        metrics=metrics or Metrics(),
    )


STALE_UPLOAD_SECONDS = 24 * 3600


def _remove_stale_uploads(temp_dir: Path) -> None:
    """Temporary files of uploads, matter exports being written and object-store downloads cut off
    by a crash. Only old ones: other processes sharing the data dir may be receiving uploads right
    now."""
    cutoff = time.time() - STALE_UPLOAD_SECONDS
    patterns = ("upload-*.part", "export-*.zip", "download-*.part")
    for path in [p for pattern in patterns for p in temp_dir.glob(pattern)]:
        with contextlib.suppress(FileNotFoundError):
            if path.stat().st_mtime < cutoff:
                path.unlink()


# Young-generation collections every 20,000 net allocations instead of 700, and the older
# generations 50 and 100 times rarer: a request allocates thousands of objects (ORM rows, pydantic
# models, the audit entry), and most die with it, by reference counting.
GC_THRESHOLDS = (20_000, 50, 100)


def settle_garbage_collector() -> None:
    """Once the process has started: move what it holds for good (modules, the ORM's mappings,
    compiled statements, AI models) out of the collector's sight (`gc.freeze`), and collect less
    often. Under load, each full collection walked all of it (200,000 objects, 90 ms with the loop
    stopped): that was the p99 of a case read at 16 connections (docs/research/bench-notes-2026-11.md, "GC
    pauses")."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
