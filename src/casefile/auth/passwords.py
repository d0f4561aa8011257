"""Argon2id password hashing. Hashing is CPU-bound, so it runs in a worker thread."""

from __future__ import annotations

from functools import cache

import anyio.to_thread
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

_hasher = PasswordHasher()  # argon2-cffi defaults: Argon2id, RFC 9106 low-memory profile


@cache
def _dummy_hash() -> str:
    """Verified against when the email is unknown, so that both failures take the same time.
    Made on first use, not at import: hashing costs tens of milliseconds of every start
    (`casefile --help` included)."""
    return _hasher.hash("casefile-dummy-password")


async def hash_password(password: str) -> str:
    return await anyio.to_thread.run_sync(_hasher.hash, password)


async def verify_password(password_hash: str | None, password: str) -> bool:
    def verify() -> bool:
        try:
            return _hasher.verify(password_hash or _dummy_hash(), password) and password_hash is not None
        except (VerificationError, InvalidHashError):
            return False

    return await anyio.to_thread.run_sync(verify)


def needs_rehash(password_hash: str) -> bool:
    return _hasher.check_needs_rehash(password_hash)
