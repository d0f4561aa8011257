"""What one process shares between requests: settings, database engines, the token deny-list."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from redis.asyncio import Redis

from casefile.db import Database
from casefile.metrics import Metrics
from casefile.ratelimit import RateLimiter
from casefile.secretbox import SecretBox
from casefile.settings import Settings
from casefile.storage import ContentStore
from casefile.worker.wakeup import Wakeup

if TYPE_CHECKING:  # built by `casefile.startup`, from the layers above this one
    from casefile.auth.denylist import DenyList
    from casefile.auth.oidc import OidcClient
    from casefile.auth.principal_cache import PrincipalCache
    from casefile.system_errors import ErrorReporter


@dataclass
class Runtime:
    settings: Settings
    db: Database
    deny_list: DenyList
    redis: Redis | None
    store: ContentStore
    secret_box: SecretBox
    wakeup: Wakeup
    ai_wakeup: Wakeup  # in-process only: AI jobs take seconds, so other processes' poll is enough
    limiter: RateLimiter
    errors: ErrorReporter
    principals: PrincipalCache
    # The OpenID provider, when single sign-on is configured.
    oidc: OidcClient | None = None
    # The process's Prometheus metrics: the app's own when serving (`GET /metrics` shows them).
    metrics: Metrics = field(default_factory=Metrics)

    async def close(self) -> None:
        await self.errors.aclose()
        await self.db.dispose()
        if self.oidc is not None:
            await self.oidc.aclose()
        if self.redis is not None:
            await self.redis.aclose()
