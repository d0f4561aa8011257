"""Verify Casefile webhook deliveries with the standard library only.

`verify_signature`: Casefile's own `X-Service-Signature: t=<unix>,v1=<hex>[,v1=<hex>...]`, an
HMAC-SHA256 of `<t>.<raw body>`. `verify_standard_signature`: the Standard Webhooks headers
`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64> [...]`, an HMAC-SHA256 of
`<id>.<timestamp>.<raw body>`. Both are keyed with the webhook secret's UTF-8 bytes.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import time
from collections.abc import Iterable, Mapping

__all__ = ["SignatureError", "verify_signature", "verify_standard_signature"]
__version__ = "0.1.0"

DEFAULT_TOLERANCE = 300  # seconds: older (or newer) deliveries are replays


class SignatureError(ValueError):
    """The delivery is not authentic, or is too old."""


def _lower(headers: Mapping[str, str]) -> dict[str, str]:
    return {key.lower(): value for key, value in headers.items()}


def _secret_list(secrets: str | Iterable[str]) -> list[str]:
    return [secrets] if isinstance(secrets, str) else list(secrets)


def _check_time(stamp: str, tolerance: float, now: float | None) -> int:
    if not stamp.isdigit():
        raise SignatureError("malformed timestamp")
    current = time.time() if now is None else now
    if abs(current - int(stamp)) > tolerance:
        raise SignatureError("timestamp outside the tolerance")
    return int(stamp)


def verify_signature(
    body: bytes,
    headers: Mapping[str, str],
    secrets: str | Iterable[str],
    tolerance: float = DEFAULT_TOLERANCE,
    *,
    now: float | None = None,
) -> int:
    """Check Casefile's signature; return the signed timestamp or raise SignatureError."""
    lowered = _lower(headers)
    header = lowered.get("x-service-signature")
    if not header:
        raise SignatureError("no signature header")
    stamp, candidates = "", []
    for part in header.split(","):
        key, _, value = part.strip().partition("=")
        if key == "t":
            stamp = value
        elif key == "v1":
            candidates.append(value)
    if not candidates:
        raise SignatureError("malformed signature header")
    if lowered.get("x-service-timestamp", stamp) != stamp:
        raise SignatureError("timestamp headers disagree")
    signed_at = _check_time(stamp, tolerance, now)
    for secret in _secret_list(secrets):
        expected = hmac.new(secret.encode(), f"{stamp}.".encode() + body, hashlib.sha256).hexdigest()
        if any(hmac.compare_digest(expected, candidate) for candidate in candidates):
            return signed_at
    raise SignatureError("no signature matches")


def verify_standard_signature(
    body: bytes,
    headers: Mapping[str, str],
    secrets: str | Iterable[str],
    tolerance: float = DEFAULT_TOLERANCE,
    *,
    now: float | None = None,
) -> str:
    """Check the Standard Webhooks signature; return the message id (`webhook-id`) or raise."""
    lowered = _lower(headers)
    message_id = lowered.get("webhook-id", "")
    stamp = lowered.get("webhook-timestamp", "")
    signatures = lowered.get("webhook-signature", "")
    if not (message_id and stamp and signatures):
        raise SignatureError("missing Standard Webhooks headers")
    _check_time(stamp, tolerance, now)
    candidates = []
    for entry in signatures.split(" "):
        version, _, value = entry.partition(",")
        if version == "v1":
            try:
                candidates.append(base64.b64decode(value, validate=True))
            except (binascii.Error, ValueError):
                continue
    signed = f"{message_id}.{stamp}.".encode() + body
    for secret in _secret_list(secrets):
        expected = hmac.new(secret.encode(), signed, hashlib.sha256).digest()
        if any(hmac.compare_digest(expected, candidate) for candidate in candidates):
            return message_id
    raise SignatureError("no signature matches")
