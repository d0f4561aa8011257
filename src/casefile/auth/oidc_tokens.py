"""The provider's tokens and key sets, read without the network: the unverified header and claims
of a token, the usable keys of a key set, the key that signed a token, and the verified email
its claims vouch for. `oidc.py` fetches what these read and checks the signatures."""

from __future__ import annotations

import json
import logging
from typing import Any

from joserfc import jws
from joserfc.errors import JoseError
from joserfc.jwk import JWKRegistry, Key

log = logging.getLogger(__name__)

# Only signatures made with a private key. `none` and the HMAC family are refused whatever the
# token or the key set says: an HS256 token "signed" with a public key or with the client secret
# must never pass.
ASYMMETRIC_ALGORITHMS = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"}
)


def unverified(token: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """Header and claims of a compact JWS, before any check; None if it is not one."""
    try:
        obj = jws.extract_compact(token.encode("ascii"))
        claims = json.loads(obj.payload or b"")
    except (JoseError, ValueError, UnicodeError):
        return None
    if not isinstance(claims, dict):
        return None
    return dict(obj.headers()), claims


def public_keys(document: Any) -> list[Key]:
    """The usable signature keys of a JWK set. Symmetric keys and keys for encryption are left
    out, as are keys this library cannot read (the others still work)."""
    keys: list[Key] = []
    for entry in document.get("keys", []) if isinstance(document, dict) else []:
        if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
            continue
        kty = entry.get("kty")
        if kty not in ("RSA", "EC", "OKP"):
            continue
        public = {k: v for k, v in entry.items() if k not in ("d", "p", "q", "dp", "dq", "qi", "oth")}
        try:
            keys.append(JWKRegistry.import_key(public, kty))
        except (JoseError, ValueError, TypeError):
            log.warning("single sign-on: skipping a key of the provider's JWK set that cannot be read")
    return keys


def pick_key(keys: list[Key], kid: str | None, alg: str) -> Key | None:
    """The key that signed the token: by `kid` (or the only key when the token names none),
    and only if the key does not declare a different algorithm."""
    candidates = [k for k in keys if k.kid == kid] if kid is not None else keys
    candidates = [k for k in candidates if k.alg in (None, alg)]
    if kid is None and len(candidates) != 1:
        return None
    return candidates[0] if candidates else None


def verified_email(claims: dict[str, Any]) -> str | None:
    email = claims.get("email")
    if not isinstance(email, str) or "@" not in email or len(email) > 320:
        return None
    # An address the provider says it has not verified would let anyone who registers it at the
    # provider take over the Casefile account that has it (an administrator's, say).
    if claims.get("email_verified") in (False, "false"):
        return None
    return email.strip()
