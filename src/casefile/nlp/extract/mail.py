"""E-mail (.eml): the main headers, the body (plain text, or HTML made text) and the names of attachments."""

from __future__ import annotations

import email
from email import policy
from email.message import EmailMessage
from pathlib import Path

from ..types import ProcessingFailed
from .markup import html_to_text


def eml_text(path: Path) -> str:
    message = email.message_from_bytes(path.read_bytes(), policy=policy.default)
    if not isinstance(message, EmailMessage):  # always true with policy.default; narrows the type
        raise ProcessingFailed("the e-mail could not be parsed")
    lines = []
    for header in ("From", "To", "Cc", "Date", "Subject"):
        value = message.get(header)
        if value:
            lines.append(f"{header}: {value}")
    lines.append("")
    lines.append(_eml_body(message))
    attachments = [part.get_filename() or "(unnamed)" for part in message.iter_attachments()]
    if attachments:
        lines.append("")
        lines.append("Attachments: " + ", ".join(attachments))
    return "\n".join(lines)


def _eml_body(message: EmailMessage) -> str:
    body = message.get_body(preferencelist=("plain", "html"))
    if body is None:
        return ""
    try:
        content = body.get_content()
    except (LookupError, ValueError, AssertionError):  # unknown charset or broken encoding
        payload = body.get_payload(decode=True)
        content = payload.decode("utf-8", errors="replace") if isinstance(payload, bytes) else ""
    if not isinstance(content, str):
        return ""
    return html_to_text(content) if body.get_content_subtype() == "html" else content
