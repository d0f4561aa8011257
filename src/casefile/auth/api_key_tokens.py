"""The API key format: `cf_<prefix>_<secret>`, sent as `X-API-Key`. The prefix (public, shown in
listings) finds the key; the whole key is stored as a SHA-256 hash: it carries 256 random bits,
so a slow password hash would add nothing but latency to every request."""

from __future__ import annotations

import hashlib
import secrets

SCHEME = "cf"
MAX_KEY_LENGTH = 200
_PREFIX_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567"
_PREFIX_LENGTH = 12


def new_key() -> tuple[str, str]:
    """A fresh key: (its prefix, the whole key)."""
    prefix = "".join(secrets.choice(_PREFIX_ALPHABET) for _ in range(_PREFIX_LENGTH))
    return prefix, f"{SCHEME}_{prefix}_{secrets.token_urlsafe(32)}"


def prefix_of(key: str) -> str | None:
    """The public prefix of a well-formed key, else None."""
    scheme, _, rest = key.partition("_")
    prefix, _, secret = rest.partition("_")
    if scheme != SCHEME or not prefix or not secret or len(key) > MAX_KEY_LENGTH:
        return None
    return prefix


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()
