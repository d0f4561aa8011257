"""Browser sessions of the web app (docs/web-app.md#sessions): a login session (`auth_sessions`,
the same row a token login makes) carried in an encrypted cookie instead of a bearer token.

The cookie holds the session id, the user, the role at sign-in and the times of sign-in and of
the last request, sealed with the service's secret box (Fernet: encrypted and authenticated, so
it can be neither read nor forged). A request with it becomes the same `Principal` a token gives,
after the same checks: the user exists and is active, the session is not revoked (logout,
disabling, a password change), and besides, for a browser, the role has not changed since sign-in
(a role change ends the session: the pages on screen were built for the old role) and the session
has been used within the idle time-out. It is accepted under `/app` only (`applies_to`): the API
never takes cookies, so a cross-site form can never reach it with the user's credentials.

CSRF: every state-changing request under `/app` carries `csrf_token(...)`, an HMAC of the session
id under the service's token key (the synchroniser-token pattern, without server state).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from casefile.auth.oidc import Identity
from casefile.auth.permissions import ROLE_PERMISSIONS, Principal
from casefile.auth.service import check_password, sso_user, start_login_session
from casefile.errors import invalid_token, no_credentials, user_disabled
from casefile.models import AuthSession, User
from casefile.runtime import Runtime

COOKIE = "casefile_session"
APP_PREFIX = "/app"
# The cookie's last-request time is rewritten at most this often (not on every request).
RENEW_AFTER_SECONDS = 60
# Where a renewed cookie waits for the response (scope["state"]; the web app's middleware sets it).
RENEWED_STATE = "browser_session_cookie"


def applies_to(path: str) -> bool:
    return path == APP_PREFIX or path.startswith(APP_PREFIX + "/")


@dataclass(frozen=True)
class Ticket:
    session_id: str
    user_id: str
    role: str
    signed_in: float
    seen: float

    def seal(self, runtime: Runtime) -> str:
        data = {"s": self.session_id, "u": self.user_id, "r": self.role, "i": self.signed_in, "t": self.seen}
        return runtime.secret_box.seal(json.dumps(data, separators=(",", ":")))

    @classmethod
    def open(cls, runtime: Runtime, value: str) -> Ticket | None:
        if len(value) > 2048:
            return None
        try:
            data = json.loads(runtime.secret_box.open(value))
            return cls(str(data["s"]), str(data["u"]), str(data["r"]), float(data["i"]), float(data["t"]))
        except (RuntimeError, ValueError, KeyError, TypeError, UnicodeError):
            return None


def csrf_token(runtime: Runtime, session_id: str) -> str:
    key = runtime.settings.jwt_key.encode()
    return hmac.new(key, b"csrf:" + session_id.encode(), hashlib.sha256).hexdigest()


def csrf_matches(runtime: Runtime, session_id: str, given: str | None) -> bool:
    return given is not None and hmac.compare_digest(csrf_token(runtime, session_id), given)


def new_form_nonce() -> str:
    """The sign-in form's token, before there is a session (login CSRF): a random value in a
    cookie of its own, repeated in the form (double submit)."""
    return secrets.token_urlsafe(24)


async def sign_in(session: AsyncSession, runtime: Runtime, *, email: str, password: str) -> Ticket:
    """The password check of `POST /auth/login` (same audit entries, same errors), then a login
    session for the browser."""
    user = await check_password(session, email=email, password=password)
    auth_session = await start_login_session(session, user, method="password")
    now = time.time()
    return Ticket(auth_session.id, user.id, user.role, now, now)


async def sso_sign_in(session: AsyncSession, identity: Identity) -> Ticket:
    """Single sign-on's end for a browser: the user as `GET /auth/oauth/callback` finds (or makes)
    them, and a login session (`user.login`, method "oidc") carried by the cookie, not tokens."""
    user = await sso_user(session, identity)
    auth_session = await start_login_session(session, user, method="oidc")
    now = time.time()
    return Ticket(auth_session.id, user.id, user.role, now, now)


@dataclass(frozen=True)
class _SessionFacts:
    role: str
    active: bool
    revoked: bool


async def authenticate(
    session: AsyncSession, runtime: Runtime, cookie: str | None, state: dict[str, object]
) -> Principal:
    """The principal of a browser session cookie, or 401. A renewed cookie (new last-request
    time) is left in `state` for the response."""
    if not cookie:
        raise no_credentials()
    ticket = Ticket.open(runtime, cookie)
    if ticket is None:
        raise invalid_token()
    settings = runtime.settings
    now = time.time()
    if (
        now - ticket.seen > settings.web_idle_seconds
        or now - ticket.signed_in > settings.web_session_max_seconds
    ):
        raise invalid_token()
    cache_key = ("browser", ticket.session_id, ticket.user_id)
    generation = await runtime.principals.generation()
    facts: _SessionFacts | None = runtime.principals.get(cache_key, generation)
    if facts is None:
        user = await session.get(User, ticket.user_id)
        auth_session = await session.get(AuthSession, ticket.session_id)
        if user is None or auth_session is None or auth_session.user_id != user.id:
            raise invalid_token()
        # The row says revoked for good; the deny-list also covers a revocation made through Redis.
        revoked = auth_session.revoked_at is not None or await runtime.deny_list.is_denied(
            session, ticket.session_id
        )
        facts = _SessionFacts(role=user.role, active=user.active, revoked=revoked)
        runtime.principals.put(cache_key, generation, facts)
    if not facts.active:
        raise user_disabled()
    if facts.revoked or facts.role != ticket.role:
        raise invalid_token()
    if now - ticket.seen > RENEW_AFTER_SECONDS:
        renewed = Ticket(ticket.session_id, ticket.user_id, ticket.role, ticket.signed_in, now)
        state[RENEWED_STATE] = renewed.seal(runtime)
    return Principal(
        kind="user",
        id=ticket.user_id,
        role=facts.role,
        permissions=ROLE_PERMISSIONS[facts.role],
        session_id=ticket.session_id,
        token_expires_at=max(now, ticket.seen) + settings.web_idle_seconds,
    )
