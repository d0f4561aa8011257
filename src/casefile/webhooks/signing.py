"""Webhook signatures (docs/api-conventions.md#signatures): `X-Service-Signature:
t=<unix>,v1=<hex>[,v1=<hex>...]` where each `v1` is HMAC-SHA256 over `<t>.<raw body>` with one of the
webhook's valid secrets (during a secret rotation there is one per secret, as Stripe does), and
`X-Service-Timestamp: <unix>`."""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Iterable, Mapping

from casefile.errors import SignatureError

SIGNATURE_HEADER = "X-Service-Signature"
TIMESTAMP_HEADER = "X-Service-Timestamp"


def _digest(secret: str, timestamp: int | str, body: bytes) -> str:
    return hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()


def signature_headers(body: bytes, secrets: Iterable[str], timestamp: int | None = None) -> dict[str, str]:
    stamp = int(time.time()) if timestamp is None else timestamp
    signatures = ",".join(f"v1={_digest(secret, stamp, body)}" for secret in secrets)
    return {SIGNATURE_HEADER: f"t={stamp},{signatures}", TIMESTAMP_HEADER: str(stamp)}


def verify_signature(
    body: bytes,
    headers: Mapping[str, str],
    secrets: str | Iterable[str],
    tolerance: int = 300,
    *,
    now: float | None = None,
) -> int:
    """Check a delivery: `body` is the raw request body, `headers` the request's headers (any
    letter case), `secrets` the webhook's secret (or several, while rotating). Returns the signed
    timestamp; raises SignatureError when no signature matches or the timestamp is more than
    `tolerance` seconds away from now (a replay)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    header = lowered.get(SIGNATURE_HEADER.lower())
    if not header:
        raise SignatureError("no signature header")
    stamp = ""
    candidates = []
    for part in header.split(","):
        key, _, value = part.strip().partition("=")
        if key == "t":
            stamp = value
        elif key == "v1":
            candidates.append(value)
    if not stamp.isdigit() or not candidates:
        raise SignatureError("malformed signature header")
    if lowered.get(TIMESTAMP_HEADER.lower(), stamp) != stamp:
        raise SignatureError("timestamp headers disagree")
    current = time.time() if now is None else now
    if abs(current - int(stamp)) > tolerance:
        raise SignatureError("timestamp outside the tolerance")
    secret_list = [secrets] if isinstance(secrets, str) else list(secrets)
    for secret in secret_list:
        expected = _digest(secret, stamp, body)
        if any(hmac.compare_digest(expected, candidate) for candidate in candidates):
            return int(stamp)
    raise SignatureError("no signature matches")
