"""Encryption of secrets the service must be able to read back (webhook signing secrets).

Fernet (AES-128-CBC with HMAC-SHA256, from `cryptography`) under a key derived from
CASEFILE_SECRET_KEY, or from a key generated into the data dir on first use.
"""

from __future__ import annotations

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken


class SecretBox:
    def __init__(self, key_material: str) -> None:
        # Any string works as the setting; Fernet needs 32 url-safe base64 bytes.
        key = base64.urlsafe_b64encode(hashlib.sha256(key_material.encode()).digest())
        self._fernet = Fernet(key)

    def seal(self, secret: str) -> str:
        return self._fernet.encrypt(secret.encode()).decode("ascii")

    def open(self, sealed: str) -> str:
        try:
            return self._fernet.decrypt(sealed.encode("ascii")).decode()
        except InvalidToken as exc:
            raise RuntimeError(
                "a stored secret cannot be decrypted: was CASEFILE_SECRET_KEY changed?"
            ) from exc
