"""Access tokens: HS256 JWTs (PyJWT) with the algorithm pinned, so `alg: none` or RS/HS confusion
is refused before any claim is read."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import jwt

from casefile.clock import new_id, utcnow
from casefile.settings import Settings

ALGORITHM = "HS256"


@dataclass(frozen=True)
class AccessToken:
    token: str
    jti: str
    expires_at: datetime


@dataclass(frozen=True)
class AccessClaims:
    user_id: str
    session_id: str
    jti: str
    expires_at: datetime


def issue_access_token(settings: Settings, *, user_id: str, role: str, session_id: str) -> AccessToken:
    now = utcnow()
    expires_at = now + timedelta(seconds=settings.jwt_ttl_seconds)
    jti = new_id("jti")
    claims = {
        "sub": user_id,
        "role": role,
        "sid": session_id,
        "jti": jti,
        "iat": int(now.timestamp()),
        "exp": int(expires_at.timestamp()),
        "iss": settings.jwt_issuer,
        "aud": settings.jwt_audience,
    }
    token = jwt.encode(claims, settings.jwt_key, algorithm=ALGORITHM)
    return AccessToken(token=token, jti=jti, expires_at=expires_at.replace(microsecond=0))


# Tokens already verified, by (token, key, audience, issuer): the same bytes verify the same way
# every time, so a client's next request skips the signature check and the claim parsing, and
# only the expiry is checked again. Bounded: emptied when full (refilled on use).
_VERIFIED: dict[tuple[str, str, str, str], AccessClaims] = {}
_VERIFIED_MAX = 10_000


def decode_access_token(settings: Settings, token: str) -> AccessClaims | None:
    """The token's claims if it is well-formed, correctly signed, current and ours; else None."""
    key = (token, settings.jwt_key, settings.jwt_audience, settings.jwt_issuer)
    known = _VERIFIED.get(key)
    if known is not None:
        if known.expires_at.timestamp() > time.time():
            return known
        del _VERIFIED[key]
        return None
    claims = _verify(settings, token)
    if claims is not None:
        if len(_VERIFIED) >= _VERIFIED_MAX:
            _VERIFIED.clear()
        _VERIFIED[key] = claims
    return claims


def _verify(settings: Settings, token: str) -> AccessClaims | None:
    try:
        claims = jwt.decode(
            token,
            settings.jwt_key,
            algorithms=[ALGORITHM],
            audience=settings.jwt_audience,
            issuer=settings.jwt_issuer,
            options={"require": ["exp", "iat", "sub", "jti", "sid", "iss", "aud"]},
        )
    except jwt.PyJWTError:
        return None
    if not all(isinstance(claims.get(k), str) for k in ("sub", "sid", "jti")):
        return None
    return AccessClaims(
        user_id=claims["sub"],
        session_id=claims["sid"],
        jti=claims["jti"],
        expires_at=datetime.fromtimestamp(claims["exp"], UTC),
    )
