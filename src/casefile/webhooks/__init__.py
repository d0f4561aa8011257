"""Signed outbound webhooks. Receivers: `from casefile.webhooks import verify_signature`."""

from casefile.webhooks.signing import SignatureError, verify_signature

__all__ = ["SignatureError", "verify_signature"]
