"""Who is calling and from where, for the request being served: what the audit trail records
with every entry (docs/api-conventions.md#audit-trail).

`RequestIdMiddleware` opens a `RequestContext` per HTTP request (its id, the client's address and
user agent); the caller's authentication fills in the actor (`identify`). Outside a request (the
workers, the command line) there is none, and entries are the system's.

The context is one mutable object per request, reached through a context variable: a dependency
that identifies the caller mutates the object the middleware created, so the handler, its
exception handlers and anything they call see the same actor whatever context copies the framework
makes in between.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Literal

ActorType = Literal["user", "api_key", "system"]
USER_AGENT_LIMIT = 512


@dataclass
class RequestContext:
    request_id: str | None = None
    ip: str | None = None
    user_agent: str | None = None
    actor_type: ActorType = "system"
    actor_id: str | None = None
    # The user behind the call: the user, or the user who created the API key.
    user_id: str | None = None

    def identify(self, actor_type: ActorType, actor_id: str, user_id: str | None) -> None:
        self.actor_type, self.actor_id, self.user_id = actor_type, actor_id, user_id


_current: ContextVar[RequestContext | None] = ContextVar("request_context", default=None)


def current_context() -> RequestContext | None:
    return _current.get()


@contextmanager
def request_context(context: RequestContext) -> Iterator[RequestContext]:
    token = _current.set(context)
    try:
        yield context
    finally:
        _current.reset(token)
