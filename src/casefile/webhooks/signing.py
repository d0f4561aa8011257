"""Webhook signatures (docs/api-conventions.md#signatures): `X-Service-Signature:
t=<unix>,v1=<hex>[,v1=<hex>...]` where each `v1` is HMAC-SHA256 over `<t>.<raw body>` with one of the
webhook's valid secrets (during a secret rotation there is one per secret, as Stripe does), and
`X-Service-Timestamp: <unix>`.

Every delivery also carries the Standard Webhooks headers (docs/api-conventions.md#standard-webhooks,
contract §14), so receivers can verify with that specification's libraries: `webhook-id` (the
payload's `id`), `webhook-timestamp` and `webhook-signature: v1,<base64> [v1,<base64> ...]`, each an
HMAC-SHA256 over `<id>.<timestamp>.<raw body>` keyed with the secret's UTF-8 bytes (so a receiver
gives its library `base64(secret)`)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from collections.abc import Iterable, Mapping

from casefile.errors import SignatureError

SIGNATURE_HEADER = "X-Service-Signature"
TIMESTAMP_HEADER = "X-Service-Timestamp"
STANDARD_ID_HEADER = "webhook-id"
STANDARD_TIMESTAMP_HEADER = "webhook-timestamp"
STANDARD_SIGNATURE_HEADER = "webhook-signature"


def _digest(secret: str, timestamp: int | str, body: bytes) -> str:
    return hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()


def _standard_digest(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    signed = f"{message_id}.{timestamp}.".encode() + body
    return base64.b64encode(hmac.new(secret.encode(), signed, hashlib.sha256).digest()).decode()


def signature_headers(
    body: bytes, secrets: Iterable[str], timestamp: int | None = None, *, message_id: str | None = None
) -> dict[str, str]:
    """Casefile's own signature headers, and, given the payload's `id` as `message_id`, the
    Standard Webhooks ones; one signature per secret in force in each."""
    stamp = int(time.time()) if timestamp is None else timestamp
    secret_list = list(secrets)
    signatures = ",".join(f"v1={_digest(secret, stamp, body)}" for secret in secret_list)
    headers = {SIGNATURE_HEADER: f"t={stamp},{signatures}", TIMESTAMP_HEADER: str(stamp)}
    if message_id is not None:
        headers[STANDARD_ID_HEADER] = message_id
        headers[STANDARD_TIMESTAMP_HEADER] = str(stamp)
        headers[STANDARD_SIGNATURE_HEADER] = " ".join(
            f"v1,{_standard_digest(secret, message_id, stamp, body)}" for secret in secret_list
        )
    return headers


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
