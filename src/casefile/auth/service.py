"""Login, refresh, logout, and turning credentials into a Principal."""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.audit import service as audit
from casefile.audit.service import Outcome
from casefile.auth import api_key_tokens, passwords, principal_cache
from casefile.auth.jwt_tokens import decode_access_token, issue_access_token
from casefile.auth.oidc import Identity
from casefile.auth.permissions import ROLE_PERMISSIONS, Principal, key_permissions
from casefile.auth.repository import find_user_by_email
from casefile.clock import utcnow
from casefile.db import commit_early
from casefile.errors import (
    bad_login,
    invalid_api_key,
    invalid_refresh_token,
    invalid_token,
    user_disabled,
)
from casefile.events import payloads
from casefile.events.outbox import emit
from casefile.models import ApiKey, AuthSession, RefreshToken, User
from casefile.runtime import Runtime

# A used refresh token presented again this soon, by the same client (address and user agent), is
# a retry (the answer was lost, two tabs refreshed at once): it gets the pair the first
# presentation got. Any other reuse ends the session (RFC 9700, 4.14.2: reuse detection): later
# than this, from another client, or once the pair it was exchanged for has been used itself.
REFRESH_RETRY_WINDOW = timedelta(seconds=10)
# last_used_at is a hint for operators, not an audit log: write it at most once a minute per key.
LAST_USED_RESOLUTION = timedelta(seconds=60)


@dataclass(frozen=True)
class IssuedTokens:
    user: User
    access_token: str
    expires_at_epoch: int
    expires_in: int
    refresh_token: str


def hash_refresh_token(token: str) -> str:
    """How a refresh token is stored: 256 random bits need no slow hash (like API keys)."""
    return hashlib.sha256(token.encode()).hexdigest()


async def _start_tokens(
    session: AsyncSession, runtime: Runtime, user: User, auth_session: AuthSession
) -> IssuedTokens:
    settings = runtime.settings
    refresh = secrets.token_urlsafe(32)
    session.add(
        RefreshToken(
            session_id=auth_session.id,
            token_hash=hash_refresh_token(refresh),
            expires_at=utcnow() + timedelta(seconds=settings.refresh_ttl_seconds),
        )
    )
    access = issue_access_token(settings, user_id=user.id, role=user.role, session_id=auth_session.id)
    await session.flush()
    return IssuedTokens(
        user=user,
        access_token=access.token,
        expires_at_epoch=int(access.expires_at.timestamp()),
        expires_in=settings.jwt_ttl_seconds,
        refresh_token=refresh,
    )


async def login(session: AsyncSession, runtime: Runtime, *, email: str, password: str) -> IssuedTokens:
    user = await check_password(session, email=email, password=password)
    return await open_session(session, runtime, user, method="password")


async def check_password(session: AsyncSession, *, email: str, password: str) -> User:
    """The user whose email and password these are (a failure is audited, and 401), for the
    token login and the web app's sign-in alike."""
    user = await find_user_by_email(session, email)
    # verify_password runs even for an unknown email, so timing does not tell which was wrong.
    valid = await passwords.verify_password(user.password_hash if user else None, password)
    if user is None or not valid:
        await _record_failed_login(session, email, user, "wrong email or password", "failed")
        raise bad_login()
    if not user.active:
        await _record_failed_login(session, email, user, "user disabled", "denied")
        raise user_disabled()
    if user.password_hash and passwords.needs_rehash(user.password_hash):
        user.password_hash = await passwords.hash_password(password)
    return user


async def _record_failed_login(
    session: AsyncSession, email: str, user: User | None, reason: str, outcome: Outcome
) -> None:
    """`auth.login_failed`, kept although the request fails: its transaction changed nothing
    else, so it is committed now with the entry. Nobody is authenticated: the entry names the
    account tried (if it exists) as its resource and the email given in its details."""
    audit.record(
        session,
        "auth.login_failed",
        resource_type="user",
        resource_id=user.id if user else None,
        outcome=outcome,
        details={"email": email, "reason": reason},
        actor=audit.Actor("user", None, None),
    )
    await commit_early(session)


async def open_session(session: AsyncSession, runtime: Runtime, user: User, *, method: str) -> IssuedTokens:
    """Start a login session for an authenticated user (password now, single sign-on later)."""
    return await _start_tokens(
        session, runtime, user, await start_login_session(session, user, method=method)
    )


async def start_login_session(session: AsyncSession, user: User, *, method: str) -> AuthSession:
    """The login session itself (tokens carry its id; a browser's cookie too: auth/browser.py)."""
    user.last_login_at = utcnow()
    auth_session = AuthSession(user_id=user.id)
    session.add(auth_session)
    await session.flush()
    await emit(session, "user.login", payloads.user_login(user, method))
    return auth_session


def client_fingerprint(address: str, user_agent: str) -> str:
    """Who presents a refresh token, as far as a server can tell: its address and user agent
    (hashed: kept sealed beside the pair, never shown)."""
    return hashlib.sha256(f"{address}\n{user_agent}".encode()).hexdigest()


async def refresh(
    session: AsyncSession, runtime: Runtime, *, refresh_token: str, client: str
) -> IssuedTokens:
    """Exchange a refresh token; `client`: `client_fingerprint` of the caller."""
    now = utcnow()
    token_hash = hash_refresh_token(refresh_token)
    # Marking the token used is one atomic UPDATE: of two concurrent refreshes, exactly one wins;
    # the other waits for it (the row is locked until the winner commits), then finds it used.
    claimed = await session.execute(
        update(RefreshToken)
        .where(
            RefreshToken.token_hash == token_hash,
            RefreshToken.used_at.is_(None),
            RefreshToken.expires_at > now,
        )
        .values(used_at=now)
        .returning(RefreshToken.id, RefreshToken.session_id)
    )
    row = claimed.one_or_none()
    if row is None:
        stale = await session.scalar(select(RefreshToken).where(RefreshToken.token_hash == token_hash))
        if stale is not None and stale.used_at is not None:
            retried = await _pair_for_a_retry(session, runtime, stale, now, client)
            if retried is not None:
                return retried
            # A used token presented again, and not a retry: it leaked. End the whole session,
            # and keep that revocation even though this request fails.
            stale.retry_pair_sealed = None
            await revoke_session(session, runtime, stale.session_id, reason="refresh_token_reuse")
            await commit_early(session)
        raise invalid_refresh_token()
    token_id, session_id = row
    user, auth_session = await _live_session(session, session_id)
    issued = await _start_tokens(session, runtime, user, auth_session)
    await session.execute(
        update(RefreshToken)
        .where(RefreshToken.id == token_id)
        .values(retry_pair_sealed=runtime.secret_box.seal(_pair_json(issued, client)))
    )
    return issued


async def _live_session(session: AsyncSession, session_id: str) -> tuple[User, AuthSession]:
    """The login session and its user, if the session may still be refreshed."""
    auth_session = await session.get(AuthSession, session_id)
    user = await session.get(User, auth_session.user_id) if auth_session else None
    if auth_session is None or auth_session.revoked_at is not None or user is None:
        raise invalid_refresh_token()
    if not user.active:
        raise user_disabled()
    return user, auth_session


def _pair_json(issued: IssuedTokens, client: str) -> str:
    return json.dumps(
        {
            "access_token": issued.access_token,
            "expires_at": issued.expires_at_epoch,
            "refresh_token": issued.refresh_token,
            "client": client,
        }
    )


async def _pair_for_a_retry(
    session: AsyncSession, runtime: Runtime, used: RefreshToken, now: datetime, client: str
) -> IssuedTokens | None:
    """The pair `used` was exchanged for, if this is a retry: within REFRESH_RETRY_WINDOW, by the
    client that exchanged it, and before the new refresh token has been used (a client that used
    it had the pair: presenting the old one again is not a retry). The same pair, not a second
    one. None otherwise."""
    if used.used_at is None or used.retry_pair_sealed is None or now - used.used_at > REFRESH_RETRY_WINDOW:
        return None
    pair = json.loads(runtime.secret_box.open(used.retry_pair_sealed))
    # A pair sealed before the client was recorded (the previous release) is no retry's.
    if not hmac.compare_digest(str(pair.get("client", "")), client):
        return None
    successor = hash_refresh_token(pair["refresh_token"])
    successor_used = await session.scalar(
        select(RefreshToken.used_at).where(RefreshToken.token_hash == successor)
    )
    if successor_used is not None:
        return None
    user, _ = await _live_session(session, used.session_id)
    return IssuedTokens(
        user=user,
        access_token=pair["access_token"],
        expires_at_epoch=pair["expires_at"],
        expires_in=max(0, pair["expires_at"] - int(now.timestamp())),
        refresh_token=pair["refresh_token"],
    )


async def revoke_session(session: AsyncSession, runtime: Runtime, session_id: str, *, reason: str) -> None:
    auth_session = await session.get(AuthSession, session_id)
    if auth_session is None:
        return
    if auth_session.revoked_at is None:
        auth_session.revoked_at = utcnow()
        auth_session.revoked_reason = reason
    # Any access token of this session dies at once; none lives longer than one TTL from now.
    until = utcnow() + timedelta(seconds=runtime.settings.jwt_ttl_seconds + 60)
    await runtime.deny_list.deny(session, session_id, until)
    await session.flush()


async def revoke_user_sessions(session: AsyncSession, runtime: Runtime, user_id: str, *, reason: str) -> None:
    session_ids = await session.scalars(
        select(AuthSession.id).where(AuthSession.user_id == user_id, AuthSession.revoked_at.is_(None))
    )
    for session_id in list(session_ids):
        await revoke_session(session, runtime, session_id, reason=reason)


async def logout(session: AsyncSession, runtime: Runtime, principal: Principal) -> None:
    if principal.session_id is None:
        return
    await revoke_session(session, runtime, principal.session_id, reason="logout")
    user = await session.get(User, principal.id)
    if user is not None:
        await emit(session, "user.logout", payloads.user_logout(user))


@dataclass(frozen=True)
class _TokenFacts:
    """What an access token's request needs from the database, kept in `runtime.principals`."""

    role: str
    active: bool
    denied: bool


async def authenticate_bearer(session: AsyncSession, runtime: Runtime, token: str) -> Principal:
    claims = decode_access_token(runtime.settings, token)
    if claims is None and runtime.oidc is not None and runtime.oidc.may_have_issued(token):
        return await _authenticate_provider_token(session, runtime, token)
    if claims is None:
        raise invalid_token()
    cache_key = ("token", claims.session_id, claims.user_id)
    ticket = await runtime.principals.generation()
    facts: _TokenFacts | None = runtime.principals.get(cache_key, ticket)
    if facts is None:
        user = await session.get(User, claims.user_id)
        if user is None:
            raise invalid_token()
        denied = await runtime.deny_list.is_denied(session, claims.session_id)
        facts = _TokenFacts(role=user.role, active=user.active, denied=denied)
        runtime.principals.put(cache_key, ticket, facts)
    if not facts.active:  # before the deny-list: disabling also ends the sessions, say why
        raise user_disabled()
    if facts.denied:
        raise invalid_token()
    # The role comes from the database (or the cache of it), not the token: a role change
    # takes effect at once.
    return Principal(
        kind="user",
        id=claims.user_id,
        role=facts.role,
        permissions=ROLE_PERMISSIONS[facts.role],
        session_id=claims.session_id,
        token_expires_at=claims.expires_at.timestamp(),
    )


def _user_principal(user: User, *, session_id: str | None, expires_at: float) -> Principal:
    # The role comes from the database, not the token: a role change takes effect at once.
    return Principal(
        kind="user",
        id=user.id,
        role=user.role,
        permissions=ROLE_PERMISSIONS[user.role],
        session_id=session_id,
        token_expires_at=expires_at,
    )


async def _authenticate_provider_token(session: AsyncSession, runtime: Runtime, token: str) -> Principal:
    """A JWT access token of the single sign-on provider: the user with its email (created as a
    viewer on first sight). Such a principal has no Casefile session: logging out ends nothing,
    the token lives until it expires or the provider revokes it."""
    assert runtime.oidc is not None
    identity = await runtime.oidc.verify_access_token(token)
    user = await find_user_by_email(session, identity.email)
    if user is None:
        if session.info.get("write", True):
            user = await _create_sso_user(session, identity)
        else:
            # A read session never writes (db.Database): create the user in a short write
            # transaction, then end the read session's snapshot (SQLite), which may predate the
            # user, so the request's next statement sees it.
            async with runtime.db.transaction(write=True) as writer:
                user_id = (await _create_sso_user(writer, identity)).id
            await session.rollback()
            user = await session.get(User, user_id)
            if user is None:
                raise invalid_token()
    if not user.active:
        raise user_disabled()
    return _user_principal(user, session_id=None, expires_at=identity.expires_at)


async def _create_sso_user(session: AsyncSession, identity: Identity) -> User:
    """A viewer for a first sign-in through the provider, with no usable password (the password
    login never matches a missing hash). Two first requests at once: one creates, both get it."""
    user = User(
        email=identity.email, name=(identity.name or identity.email)[:200], role="viewer", password_hash=None
    )
    session.add(user)
    try:
        async with session.begin_nested():
            await session.flush()
    except IntegrityError:
        existing = await find_user_by_email(session, identity.email)
        if existing is None:
            raise
        return existing
    return user


async def sso_user(session: AsyncSession, identity: Identity) -> User:
    """Who signed in through the provider: the user with its email, or a new viewer; 401 if
    disabled. For the token answer and the web app's session alike."""
    user = await find_user_by_email(session, identity.email) or await _create_sso_user(session, identity)
    if not user.active:
        raise user_disabled()
    return user


async def sso_login(session: AsyncSession, runtime: Runtime, identity: Identity) -> IssuedTokens:
    """The end of a sign-in through the provider: our own token pair, exactly as a password
    login gives (with `user.login` method "oidc")."""
    return await open_session(session, runtime, await sso_user(session, identity), method="oidc")


async def authenticate_api_key(runtime: Runtime, session: AsyncSession, key: str) -> Principal:
    prefix = api_key_tokens.prefix_of(key)
    if not prefix:
        raise invalid_api_key()
    digest = api_key_tokens.key_hash(key)
    cache_key = ("api_key", digest)
    ticket = await runtime.principals.generation()
    cached: tuple[Principal, datetime | None] | None = runtime.principals.get(cache_key, ticket)
    if cached is not None:
        principal, expires_at = cached
        if expires_at is None or expires_at > utcnow():
            return principal
    principal, expires_at = await _api_key_from_database(runtime, session, prefix, digest)
    runtime.principals.put(cache_key, ticket, (principal, expires_at))
    return principal


async def _api_key_from_database(
    runtime: Runtime, session: AsyncSession, prefix: str, digest: str
) -> tuple[Principal, datetime | None]:
    api_key = await session.scalar(select(ApiKey).where(ApiKey.prefix == prefix))
    # Constant-time comparison of the hashes even though the prefix already matched.
    if api_key is None or not hmac.compare_digest(api_key.key_hash, digest):
        raise invalid_api_key()
    now = utcnow()
    if api_key.revoked_at is not None or (api_key.expires_at is not None and api_key.expires_at <= now):
        raise invalid_api_key()
    if api_key.last_used_at is None or now - api_key.last_used_at > LAST_USED_RESOLUTION:
        # Bookkeeping: changes no caller, so it does not empty the principal cache.
        touch = (
            update(ApiKey)
            .where(ApiKey.id == api_key.id)
            .values(last_used_at=now)
            .execution_options(**{principal_cache.NEUTRAL: True})
        )
        if session.info.get("write", True) or not runtime.db.is_sqlite:
            # A PostgreSQL read session runs in autocommit (db.Database): this one statement
            # commits by itself, on the connection the request already holds. (A transaction of
            # its own would take a second connection per request, and concurrent first uses of
            # a key would queue for the pool.)
            await session.execute(touch)
        else:
            # A read-only SQLite connection must not upgrade itself to a writer (it could fail
            # with SQLITE_BUSY_SNAPSHOT under load): write in a short transaction of its own.
            async with runtime.db.transaction(write=True) as writer:
                await writer.execute(touch)
    # The one place a key becomes a Principal: its permissions are cut down to its creator's, as
    # they are now (the role is read whenever the key's cache entry is filled, like a user's).
    creator = await session.get(User, api_key.created_by) if api_key.created_by else None
    creator_role = creator.role if creator is not None and creator.active else None
    principal = Principal(
        kind="api_key",
        id=api_key.id,
        permissions=key_permissions(api_key.permissions, creator_role),
        key_creator_id=api_key.created_by,
        key_creator_role=creator_role,
        key_case_ids=None if api_key.case_ids is None else frozenset(api_key.case_ids),
    )
    return principal, api_key.expires_at
