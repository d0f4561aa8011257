"""Signed outbound webhooks. Receivers: `from casefile.webhooks import verify_signature`."""

from casefile.errors import SignatureError
from casefile.webhooks.signing import verify_signature

__all__ = ["SignatureError", "verify_signature"]
